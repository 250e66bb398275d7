#!/bin/sh
# tests/pytorch.sh - the PyTorch side of the trainer contract (python/scavenger/trainer.py and
# examples/pytorch_fashion_mnist.py, docs/TRAINER-CONTRACT.md; (i): the wrappers that keep the
# user's loop, python/scavenger/torch.py, through tests/torch_wrappers.py, and the converted
# PyTorch examples examples/mnist_main.py, examples/ddp_multigpu_torchrun.py). Run from the repository root:
#   sh tests/pytorch.sh
# Prints "ok - NAME" / "not ok - NAME" per check and "N passed, N failed" last; exits non-zero
# on a failure. Needs Debian's python3-torch (/usr/bin/python3), the Fashion-MNIST files,
# build/libscv.so and Open MPI's mpirun (scripts/install-deps.sh and make provide them; a
# missing one is a failure, not a skip). About 20 s on 2 cores for (a)-(f) (LeNet on 2000
# samples, at most 2 processes), 40 s for (i) (a 200-sample problem; the two converted
# examples for 3 iterations each) and about 15 s for (j) (the trained model and the subset
# evaluation: tests/torch_model.py, the MNIST example's evaluation). (g) and (h), `scavenger
# run --exec` on the example, are tests/pytorch_run.sh.
WHAT="pytorch checks" KEEP= TMPNAME=pytorch
[ -f tests/pytorch_lib.sh ] || cd "$(dirname "$0")/.." || exit 1 # (started elsewhere: its checkout)
. tests/pytorch_lib.sh
HAVE_MPI=1
command -v mpirun >/dev/null 2>&1 || HAVE_MPI=0 # then K=1 only, started directly

# free_port: a port free now for a rendezvous (MASTER_PORT), drawn below the kernel's ephemeral
# range as the exec driver draws its own (src/drivers/exec.c): the kernel's choice (bind to 0)
# lies in that range, where any process's outgoing connection may take it before the trainer
# binds it (with the test binaries side by side: "Address already in use")
free_port() {
    $PY -c '
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for p in random.sample(range(max(1024, lo - 10000), lo), 64) if lo > 1088 else []:
    s = socket.socket()
    try:
        s.bind(("", p))
        print(p)
        break
    except OSError:
        pass
    finally:
        s.close()
else:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# train K DIR ARGS...: an invocation as Scavenger starts it (mpirun -np K /bin/sh -c COMMAND), the
# other SCV_* variables from the caller; mpirun's pid goes to DIR/mpirun.pid, each worker's to
# DIR/pid.RANK (COMMAND execs the trainer: dash would not, and mpirun's SIGUSR1 would end dash)
train() {
    k=$1 d=$2; shift 2
    mkdir -p "$d"
    SCV_WORKERS=$k SCV_MASTER_ADDR=127.0.0.1 SCV_MASTER_PORT=$(free_port) SCV_METRICS=$d/metrics.jsonl \
        SCV_CHECKPOINT_DIR=$d SCV_SEED=${SCV_SEED:-1} SCV_RESUME=${SCV_RESUME:-0} \
        SCV_EVAL_EVERY_EPOCHS=${SCV_EVAL_EVERY_EPOCHS:-1} SCV_MAX_EPOCHS=${SCV_MAX_EPOCHS:-0} \
        SCV_UNTIL_ITERATIONS=${SCV_UNTIL_ITERATIONS:-0} \
        timeout 120 /bin/sh -c 'echo $$ >"$0"; exec "$@"' "$d/mpirun.pid" \
        $(if [ "$HAVE_MPI" = 1 ]; then echo mpirun --oversubscribe -np "$k"; fi) /bin/sh -c "echo \$\$ > $d/pid.\${OMPI_COMM_WORLD_RANK:-0}; exec $PY $EX --subset 2000 $*" \
        >"$d/out" 2>&1
}

# wait_iter DIR N: until DIR/metrics.jsonl has iteration N (30 s at most)
wait_iter() {
    n=0
    while [ $n -lt 300 ] && ! grep -q "\"iter\":$2," "$1/metrics.jsonl" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
    [ $n -lt 300 ]
}

# --- (0) the package imports without torch; the module imports with it
check "import scavenger does not import torch" $PY -c '
import sys; sys.path.insert(0, "python")
import scavenger
assert "torch" not in sys.modules, "scavenger imported torch"
import scavenger.trainer'

# --- (a) split_batch: hand-checked cases, and libscv's scv_split_batch when build/libscv.so exists
check "split_batch: hand-checked cases" $PY - <<'EOF'
import sys; sys.path.insert(0, "python")
from scavenger.trainer import split_batch
cases = [  # (B, K, weights) -> counts   (reasoning)
    ((10, 3, None), [4, 3, 3]),        # 3.33 each: floors 9, the leftover to k=0 (tie)
    ((5, 4, None), [2, 1, 1, 1]),      # 1.25 each
    ((2, 4, None), [1, 1, 0, 0]),      # 0.5 each: two leftovers to k=0, k=1
    ((0, 3, None), [0, 0, 0]),
    ((64, 2, [3, 1]), [48, 16]),       # exact
    ((64, 3, [1, 2, 2]), [13, 26, 25]),  # 12.8 25.6 25.6: floors 62, .8 first, then the tie k=1
    ((11, 3, [1, 2, 3]), [2, 4, 5]),   # 1.83 3.67 5.5: floors 9, remainders .83 .67 first
    ((100, 3, [0.5, 0.3, 0.2]), [50, 30, 20]),
    ((10, 3, [1, 1, 1.0000000000001]), [4, 3, 3]),  # remainders within 1e-12 tie: lower k
    ((16, 2, [3, 1]), [12, 4]),        # the short last batch of the K=2 uneven run below
    ((7, 1, None), [7]),
]
bad = 0
for (B, K, w), want in cases:
    c, o = split_batch(B, K, w)
    if c != want or o != [sum(want[:k]) for k in range(K)]:
        print("split_batch(%d, %d, %s) = %s %s, expected %s" % (B, K, w, c, o, want)); bad = 1
sys.exit(bad)
EOF

if [ -f build/libscv.so ]; then
    check "split_batch: equal to libscv's scv_split_batch on 3000 random cases" $PY - <<'EOF'
import ctypes, random, sys; sys.path.insert(0, "python")
from scavenger.trainer import split_batch
lib = ctypes.CDLL("build/libscv.so")
f = lib.scv_split_batch
f.argtypes = [ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
              ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]
f.restype = None
rng = random.Random(5)
for i in range(3000):
    K = rng.randint(1, 12); B = rng.randint(0, 600)
    kind = i % 3
    w = None if kind == 0 else [float(rng.randint(1, 5)) if kind == 1 else rng.uniform(0.1, 3) for _ in range(K)]
    cw = (ctypes.c_double * K)(*w) if w else None
    cc, co = (ctypes.c_int64 * K)(), (ctypes.c_int64 * K)()
    f(B, K, cw, cc, co)
    if split_batch(B, K, w) != (list(cc), list(co)):
        print("B=%d K=%d w=%s: python %s, C %s %s" % (B, K, w, split_batch(B, K, w), list(cc), list(co)))
        sys.exit(1)
EOF
else
    nok "split_batch: equal to libscv's scv_split_batch: no build/libscv.so (make)"
fi

# --- (b) the sampler: every sample once per epoch whatever K and B, resumed at another K and B
check "sampler: each sample once per epoch at any K, B, split; resumed mid-epoch at another K and B" $PY - <<'EOF'
import sys; sys.path.insert(0, "python")
import torch
from scavenger.trainer import EpochSampler, epoch_order
n, seed = 997, 7
# (K, B, weights, iterations) segments; each segment after the first resumes from (epoch, position)
plan = [(1, 64, None, 5), (2, 100, None, 3), (3, 33, [1, 2, 2], 7), (4, 250, [5, 1, 1, 1], 4),
        (2, 7, [3, 1], 40), (5, 3, None, 30), (3, 128, None, 20)]
seen = {}  # epoch -> list of indices in the order taken
epoch = position = 0
for K, B, w, iters in plan:
    s = EpochSampler(n, seed, epoch, position)
    for _ in range(iters):
        e = s.epoch
        parts, Bc = [], None
        for r in range(K):
            idx, Bcur, counts = s.next_batch(B, K, w, r)
            assert len(idx) == counts[r] and sum(counts) == Bcur == min(B, n - s.position)
            parts.append(idx)
        seen.setdefault(e, []).extend(torch.cat(parts).tolist())
        s.advance(Bcur)
    epoch, position = s.epoch, s.position  # what a checkpoint keeps
assert epoch >= 2, "the plan should cross epochs (epoch %d)" % epoch
for e, got in seen.items():
    full = e < epoch
    assert len(got) == len(set(got)), "epoch %d: a sample taken twice" % e
    if full:
        assert sorted(got) == list(range(n)), "epoch %d: %d distinct samples of %d" % (e, len(set(got)), n)
    # the order depends only on (seed, epoch): the concatenation is the epoch's permutation
    assert got == epoch_order(n, seed, e)[:len(got)].tolist(), "epoch %d: not the epoch order" % e
assert epoch_order(n, seed, 0).tolist() != epoch_order(n, seed, 1).tolist()
assert epoch_order(n, seed, 3).tolist() == epoch_order(n, seed, 3).tolist()
EOF

# --- (c) K=2 (even and uneven SCV_SPLIT) gives K=1's weights; (d) the metrics lines
export SCV_BATCH=64 SCV_UNTIL_ITERATIONS=36 # 2000/64: the 32nd iteration is the epoch's short one
train 1 "$T/k1" || { nok "K=1 run exits 0"; sed 's/^/#   /' "$T/k1/out"; }
if [ "$HAVE_MPI" = 1 ]; then
    train 2 "$T/k2" || { nok "K=2 run exits 0"; sed 's/^/#   /' "$T/k2/out"; }
    SCV_SPLIT=3,1 train 2 "$T/k2u" || { nok "K=2 SCV_SPLIT=3,1 run exits 0"; sed 's/^/#   /' "$T/k2u/out"; }
fi
unset SCV_BATCH SCV_UNTIL_ITERATIONS

cat >"$T/weights.py" <<'EOF'
import sys, torch
def w(d):
    ck = torch.load(d + "/checkpoint.pt")
    assert ck["iteration"] == 36, "%s: iteration %s" % (d, ck["iteration"])
    return torch.cat([v.reshape(-1).double() for v in ck["model"].values()])
a, b = w(sys.argv[1]), w(sys.argv[2])
rel = float((a - b).abs().max() / a.abs().max())
print("max |w_K1 - w| / max |w_K1| = %.3g" % rel)
sys.exit(0 if rel < 1e-5 else 1)
EOF
if [ "$HAVE_MPI" = 1 ]; then
    check "K=2 gives K=1's weights after 36 iterations (1e-5 relative)" $PY "$T/weights.py" "$T/k1" "$T/k2"
    check "K=2 with SCV_SPLIT=3,1 gives K=1's weights" $PY "$T/weights.py" "$T/k1" "$T/k2u"
else
    nok "K=2 gives K=1's weights: no mpirun (scripts/install-deps.sh installs Open MPI)"
fi

cat >"$T/metrics.py" <<'EOF'
"""metrics.py FILE K SPLIT: the contract's fields on every line, and plausible norms."""
import json, math, sys
path, K, split = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [json.loads(l) for l in open(path)]
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
job = lines[0]
assert job["type"] == "job", "first line is not the job line"
for f in ("params", "n_train", "act_bytes", "input_floats", "workers", "batch", "threads"):
    assert num(job.get(f)), "job line: %s = %r" % (f, job.get(f))
assert job["params"] == 61706 and job["n_train"] == 2000 and job["act_bytes"] == 58408, job
assert job["workers"] == K
iters = [l for l in lines if l["type"] == "iter"]
evals = [l for l in lines if l["type"] == "eval"]
assert len(iters) == 36, "%d iter lines" % len(iters)
seen = 0
for i, l in enumerate(iters, 1):
    for f in ("iter", "workers", "batch", "t_compute", "t_comm", "t_iter", "samples_seen", "ts",
              "epoch_progress", "loss", "grad_sqnorm_local_mean", "grad_sqnorm_global"):
        assert num(l.get(f)), "iter %d: %s = %r" % (i, f, l.get(f))
    assert isinstance(l["batch"], int) and isinstance(l["workers"], int)
    assert l["iter"] == i and l["workers"] == K, l
    seen += l["batch"]
    assert l["samples_seen"] == seen and abs(l["epoch_progress"] - seen / 2000) < 1e-9, l
    assert l["batch"] == (16 if i == 32 else 64), "iter %d: batch %d" % (i, l["batch"])
    assert 0 <= l["t_compute"] <= l["t_iter"] + 1e-6 and l["t_comm"] >= 0, l
    gl, gg = l["grad_sqnorm_local_mean"], l["grad_sqnorm_global"]
    assert gl > 0 and gg > 0, l
    if K == 1:  # one worker: its gradient is the batch's
        assert abs(gl - gg) <= 1e-6 * gg, l
    elif split == "":  # equal shares: |mean of g_k|^2 <= mean of |g_k|^2 (Jensen)
        assert gl >= gg * (1 - 1e-5), "iter %d: local mean %g < global %g" % (i, gl, gg)
if K > 1 and split == "":  # and, 1/b_k noise: typically well above
    assert sum(l["grad_sqnorm_local_mean"] > 1.05 * l["grad_sqnorm_global"] for l in iters) > 18
assert len(evals) == 1, "%d eval lines" % len(evals)
e = evals[0]
for f in ("iter", "epoch_progress", "test_accuracy", "test_loss", "train_loss", "train_loss_samples"):
    assert num(e.get(f)), "eval: %s = %r" % (f, e.get(f))
assert e["iter"] == 32 and e["epoch_progress"] == 1.0 and e["role"] == "periodic", e
assert e["train_loss_samples"] == 2000 and 0 <= e["test_accuracy"] <= 1, e
mean = sum(l["loss"] * l["batch"] for l in iters[:32]) / 2000
assert abs(e["train_loss"] - mean) < 1e-4 * mean, (e["train_loss"], mean)
EOF
check "K=1 metrics: job, iter and eval lines carry the contract's fields" $PY "$T/metrics.py" "$T/k1/metrics.jsonl" 1 ""
if [ "$HAVE_MPI" = 1 ]; then
    check "K=2 metrics: the fields; grad_sqnorm_local_mean >= grad_sqnorm_global" $PY "$T/metrics.py" "$T/k2/metrics.jsonl" 2 ""
    check "K=2 SCV_SPLIT=3,1 metrics: the fields" $PY "$T/metrics.py" "$T/k2u/metrics.jsonl" 2 "3,1"
    check "K=2 computes K=1's grad_sqnorm_global (1e-4 relative)" $PY - "$T/k1/metrics.jsonl" "$T/k2/metrics.jsonl" <<'EOF'
import json, sys
a, b = ([json.loads(l)["grad_sqnorm_global"] for l in open(p) if '"iter"' in l and '"type":"iter"' in l] for p in sys.argv[1:3])
assert len(a) == len(b) == 36
worst = max(abs(x - y) / x for x, y in zip(a, b))
print("worst relative difference %.3g" % worst)
sys.exit(0 if worst < 1e-4 else 1)
EOF
fi

# --- (e) SIGTERM mid-run to one worker (the flag rides in the allreduce); a resume at the other K
# and another B, to a rule; another at K=2, stopped by SIGUSR1 to mpirun (Scavenger's way)
state_matches() { # state_matches DIR: scavenger-state.json is the last iter line's totals
    $PY - "$1" <<'EOF'
import json, os, sys
d = sys.argv[1]
st = json.load(open(os.path.join(d, "scavenger-state.json")))
last = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl")) if '"type":"iter"' in l][-1]
assert os.path.exists(os.path.join(d, "checkpoint.pt"))
assert st["iteration"] == last["iter"] and st["samples_seen"] == last["samples_seen"], (st, last)
assert st["samples_seen"] == 2000 * st["epoch"] + st["position"], st
print(st)
EOF
}
stopped_clean() { # stopped_clean DIR: no rank died of a signal or exited non-zero; state matches
    if grep -q "exited on signal\|non-zero" "$1/out"; then cat "$1/out"; return 1; fi
    state_matches "$1"
}
state_field() { $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1/scavenger-state.json" "$2"; }
# continues DIR I0 S0 B N [exact]: the last invocation's iter lines start at I0+1, samples_seen
# continues from S0 with batches <= B, at least N of them (exactly N with "exact"); the state
# is at its last line
continues() {
    $PY - "$@" <<'EOF'
import json, os, sys
d, i0, s0, B, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
exact = sys.argv[6:] == ["exact"]
lines = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl"))]
last_job = [k for k, l in enumerate(lines) if l["type"] == "job"][-1]
assert lines[last_job]["batch"] == B, lines[last_job]
new = [l for l in lines[last_job:] if l["type"] == "iter"]
assert (len(new) == n if exact else len(new) >= n) and [l["iter"] for l in new] == list(range(i0 + 1, i0 + 1 + len(new))), [l["iter"] for l in new]
seen = s0
for l in new:
    seen += l["batch"]
    assert l["samples_seen"] == seen and l["batch"] <= B, l
assert new[0]["batch"] == min(B, 2000 - s0 % 2000)
st = json.load(open(os.path.join(d, "scavenger-state.json")))
assert st["iteration"] == new[-1]["iter"] and st["samples_seen"] == seen, st
EOF
}
if [ "$HAVE_MPI" = 1 ]; then SK=2; else SK=1; fi
S=$T/sig
SCV_BATCH=64 train "$SK" "$S" --checkpoint-every 7 &
TP=$!
wait_iter "$S" 12
victim=$(cat "$S/pid.$((SK - 1))" 2>/dev/null)
if [ -n "$victim" ] && kill -TERM "$victim" 2>/dev/null; then
    wait $TP; rc=$?
    if [ $rc -eq 0 ]; then ok "SIGTERM (to worker $((SK - 1)) of $SK) mid-run: exit 0"; else nok "SIGTERM mid-run: exit 0 (got $rc)"; sed 's/^/#   /' "$S/out"; fi
    check "after SIGTERM: checkpoint and scavenger-state.json at the last iter line" state_matches "$S"
    I0=$(state_field "$S" iteration) S0=$(state_field "$S" samples_seen)
    RK=$((3 - SK)) # resume at the other K, with another B
    SCV_RESUME=1 SCV_BATCH=48 SCV_UNTIL_ITERATIONS=$((I0 + 5)) train "$RK" "$S"; rc=$?
    if [ $rc -eq 0 ]; then ok "resume (SCV_RESUME=1) at K=$RK B=48 to SCV_UNTIL_ITERATIONS: exit 0"; else nok "resume at K=$RK: exit 0 (got $rc)"; sed 's/^/#   /' "$S/out"; fi
    check "the resumed run continues at iteration $((I0 + 1)), samples_seen $S0 + 48, stops at $((I0 + 5))" \
        continues "$S" "$I0" "$S0" 48 5 exact
    if [ "$HAVE_MPI" = 1 ]; then
        I1=$(state_field "$S" iteration) S1=$(state_field "$S" samples_seen)
        SCV_RESUME=1 SCV_BATCH=80 train 2 "$S" &
        TP=$!
        wait_iter "$S" $((I1 + 4))
        kill -USR1 "$(cat "$S/mpirun.pid")" 2>/dev/null
        wait $TP; rc=$?
        # Open MPI's mpirun may itself exit 128 + SIGUSR1 after forwarding it (the contract allows it)
        if [ $rc -eq 0 ] || [ $rc -eq 138 ]; then ok "resume at K=2 B=80 stopped by SIGUSR1 to mpirun (mpirun exit $rc)"
        else nok "resume at K=2 stopped by SIGUSR1 to mpirun (got $rc)"; sed 's/^/#   /' "$S/out"; fi
        check "after SIGUSR1: every worker exited 0; state at the last iter line" stopped_clean "$S"
        check "the K=2 B=80 run continued at iteration $((I1 + 1)), samples_seen $S1 + 80" continues "$S" "$I1" "$S1" 80 4
    fi
else
    kill $TP 2>/dev/null; wait $TP
    nok "SIGTERM mid-run: the trainer did not reach iteration 12"; sed 's/^/#   /' "$S/out"
fi

# --- (f) usage errors exit 2 naming the variable; an unwritable metrics file exits 3; the probe
usage() { # usage VAR=VALUE TEXT: exit 2 and TEXT on stderr
    out=$(env "$1" timeout 60 $PY $EX --subset 500 2>&1); rc=$?
    [ $rc -eq 2 ] && printf '%s' "$out" | grep -q "$2" || { echo "exit $rc: $out"; return 1; }
}
check "SCV_BATCH=12x exits 2 naming SCV_BATCH" usage SCV_BATCH=12x SCV_BATCH
check "SCV_SPLIT with K+1 weights exits 2 naming SCV_SPLIT" usage SCV_SPLIT=1,1 SCV_SPLIT
check "SCV_RESUME=1 without a checkpoint exits 2" usage SCV_RESUME=1 SCV_RESUME
full() {
    mkdir -p "$T/full"
    out=$(SCV_METRICS=/dev/full SCV_CHECKPOINT_DIR=$T/full SCV_UNTIL_ITERATIONS=2 timeout 60 $PY $EX --subset 500 2>&1); rc=$?
    [ $rc -eq 3 ] && printf '%s' "$out" | grep -q /dev/full || { echo "exit $rc: $out"; return 1; }
}
check "an unwritable SCV_METRICS (/dev/full) exits 3 naming it" full
probe() {
    mkdir -p "$T/probe"
    SCV_PROBE=1 SCV_BATCH=32 SCV_METRICS=$T/probe/m.jsonl SCV_CHECKPOINT_DIR=$T/probe timeout 60 $PY $EX --subset 500 || return 1
    [ "$(grep -c '"type":"job"' "$T/probe/m.jsonl")" = 1 ] && [ "$(grep -c '"type":"iter"' "$T/probe/m.jsonl")" = 1 ] &&
        [ ! -e "$T/probe/checkpoint.pt" ]
}
check "SCV_PROBE=1: the job line and one iteration, no checkpoint" probe

continues_at() { # continues_at DIR I0 S B: the last invocation's first iter line is I0 with samples_seen S, batch <= B
    $PY - "$@" <<'EOF'
import json, os, sys
d, i0, s, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
lines = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl"))]
last_job = [k for k, l in enumerate(lines) if l["type"] == "job"][-1]
new = [l for l in lines[last_job:] if l["type"] == "iter"]
assert new[0]["iter"] == i0 and new[0]["samples_seen"] == s, new[0]
assert all(l["batch"] <= B for l in new) and lines[last_job]["batch"] == B, lines[last_job]
EOF
}
wrapped_state() { # wrapped_state DIR: no rank died; scavenger-state.json is the last iter line's totals (n = 200)
    if grep -q "exited on signal\|non-zero\|Traceback" "$1/out"; then cat "$1/out"; return 1; fi
    $PY - "$1" <<'EOF'
import json, os, sys
d = sys.argv[1]
st = json.load(open(os.path.join(d, "scavenger-state.json")))
last = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl")) if '"type":"iter"' in l][-1]
assert st["iteration"] == last["iter"] >= 30 and st["samples_seen"] == last["samples_seen"], (st, last)
assert st["samples_seen"] == 200 * st["epoch"] + st["position"], st
EOF
}
# --- (i) scavenger.torch: the wrappers that keep the user's loop (tests/torch_wrappers.py: its own
# loop, a DataLoader with a persistent worker process, StepLR, gradient clipping, a peek at the
# batch, linear LR scaling on B), on a synthetic problem of 200 samples (7 iterations an epoch at
# B=32): the weights equal plain single-process training on the same samples at K=1 and K=2, and
# after a resume at another K and B
TW=tests/torch_wrappers.py
wrap() { # wrap K DIR: one invocation as Scavenger starts it, the other SCV_* variables from the caller
    k=$1 d=$2
    mkdir -p "$d"
    SCV_WORKERS=$k SCV_MASTER_ADDR=127.0.0.1 SCV_MASTER_PORT=$(free_port) SCV_METRICS=$d/metrics.jsonl \
        SCV_CHECKPOINT_DIR=$d SCV_SEED=5 SCV_RESUME=${SCV_RESUME:-0} SCV_EVAL_EVERY_EPOCHS=${SCV_EVAL_EVERY_EPOCHS:-0.5} \
        SCV_UNTIL_ITERATIONS=${SCV_UNTIL_ITERATIONS:-0} SCV_BATCH=${SCV_BATCH:-32} \
        timeout 60 /bin/sh -c 'echo $$ >"$0"; exec "$@"' "$d/mpirun.pid" \
        $(if [ "$HAVE_MPI" = 1 ]; then echo mpirun --oversubscribe -np "$k"; fi) $PY $TW train >>"$d/out" 2>&1
}
wrapped_fields() { # wrapped_fields FILE K [N_TRAIN PARAMS]: every line has what the strict reader
    $PY - "$@" <<'EOF'    # (src/io/metrics_line.c) requires; the job line's sizes (default: the synthetic problem's)
import json, math, sys
path, K = sys.argv[1], int(sys.argv[2])
n_train, params = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (200, 195)
lines = [json.loads(l) for l in open(path)]
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
assert lines[0]["type"] == "job", lines[0]
seen = None
for i, l in enumerate(lines, 1):
    t = l["type"]
    if t == "job":
        for f in ("params", "n_train", "act_bytes", "input_floats", "workers", "batch", "threads"):
            assert num(l.get(f)), "line %d: job %s = %r" % (i, f, l.get(f))
        assert l["params"] == params and l["n_train"] == n_train and l["input_floats"] > 0 and l["act_bytes"] > 0, l
        assert n_train != 200 or (l["input_floats"] == 8 and l["act_bytes"] == 140), l
        assert l["workers"] == K, l
    elif t == "iter":
        for f in ("iter", "workers", "batch", "t_compute", "t_comm", "t_iter", "samples_seen", "ts", "epoch_progress",
                  "grad_sqnorm_local_mean", "grad_sqnorm_global"):
            assert num(l.get(f)), "line %d: iter %s = %r" % (i, f, l.get(f))
        assert l["workers"] == K and abs(l["epoch_progress"] - l["samples_seen"] / n_train) < 1e-9, l
        assert 0 <= l["t_compute"] <= l["t_iter"] and l["t_comm"] >= 0, l
        assert num(l.get("loss")) or (l.get("loss") is None and "loss" in l), l
        if K == 1:
            assert abs(l["grad_sqnorm_local_mean"] - l["grad_sqnorm_global"]) <= 1e-6 * l["grad_sqnorm_global"], l
        else:  # equal shares: mean |g_k|^2 >= |mean g_k|^2
            assert l["grad_sqnorm_local_mean"] >= l["grad_sqnorm_global"] * (1 - 1e-5), l
        assert seen is None or l["samples_seen"] == seen + l["batch"], (seen, l)
        seen = l["samples_seen"]
    elif t == "eval":  # periodic ones at Scavenger's cadence (scv.evaluation), the script's own as "user"
        assert num(l.get("iter")) and num(l.get("epoch_progress")) and l["role"] in ("periodic", "user"), l
        assert l["set"] == "full" or (l["set"] == "subset" and num(l.get("n"))), l
        assert num(l.get("train_loss")) or num(l.get("test_accuracy")), l
        assert l["role"] == "user" or num(l.get("train_loss")) or num(l.get("test_accuracy")), l
EOF
}
W=$T/wrap
if [ "$HAVE_MPI" = 1 ]; then
    SCV_UNTIL_ITERATIONS=12 wrap 1 "$W/k1" || { nok "wrappers: K=1 run exits 0"; sed 's/^/#   /' "$W/k1/out"; }
    SCV_UNTIL_ITERATIONS=12 wrap 2 "$W/k2" || { nok "wrappers: K=2 run exits 0"; sed 's/^/#   /' "$W/k2/out"; }
    check "wrappers: K=1, the user's loop, 12 iterations: plain training's weights (1e-5 relative)" $PY $TW check "$W/k1" 32x12
    check "wrappers: K=2, the user's loop, 12 iterations: plain training's weights (1e-5 relative)" $PY $TW check "$W/k2" 32x12
    check "wrappers: K=1 metrics lines carry every field the reader requires" wrapped_fields "$W/k1/metrics.jsonl" 1
    check "wrappers: K=2 metrics lines carry every field the reader requires" wrapped_fields "$W/k2/metrics.jsonl" 2
    # a resume at another K and B at the same data position (StepLR's state, momentum, LR scaled on B)
    SCV_UNTIL_ITERATIONS=5 wrap 1 "$W/r" || { nok "wrappers: K=1 B=32 to 5 exits 0"; sed 's/^/#   /' "$W/r/out"; }
    SCV_RESUME=1 SCV_BATCH=48 SCV_UNTIL_ITERATIONS=10 wrap 2 "$W/r" || { nok "wrappers: resume at K=2 B=48 exits 0"; sed 's/^/#   /' "$W/r/out"; }
    check "wrappers: K=1 B=32 to 5, resumed at K=2 B=48 to 10: plain training's weights on the same samples" $PY $TW check "$W/r" 32x5 48x5
    check "wrappers: the resumed run continues at iteration 6, samples_seen 160 + 40 (the epoch's end)" continues_at "$W/r" 6 200 48
    # a stop on an epoch's last batch (iteration 7 of 7) waits until the user's epoch-end code ran
    # (StepLR's step is in the checkpoint): resumed, the run equals plain training
    SCV_UNTIL_ITERATIONS=7 wrap 1 "$W/e" || { nok "wrappers: K=1 to 7 exits 0"; sed 's/^/#   /' "$W/e/out"; }
    SCV_RESUME=1 SCV_UNTIL_ITERATIONS=10 wrap 2 "$W/e" || { nok "wrappers: resume at K=2 to 10 exits 0"; sed 's/^/#   /' "$W/e/out"; }
    check "wrappers: stopped at an epoch's end (iteration 7), resumed at K=2: plain training's weights (the scheduler stepped once)" \
        $PY $TW check "$W/e" 32x10
    # gradient accumulation (no_sync() on every other micro-batch, the step on the second) at K=2:
    # plain single-process accumulation's weights; norms null on the micro-batches without allreduce
    TW_ACCUM=2 SCV_UNTIL_ITERATIONS=12 wrap 2 "$W/acc" || { nok "wrappers: accumulation at K=2 exits 0"; sed 's/^/#   /' "$W/acc/out"; }
    check "wrappers: accumulation over 2 micro-batches at K=2: plain accumulation's weights" $PY $TW check "$W/acc" accum=2 32x12
    check "wrappers: accumulation: the 6 micro-batches without allreduce have null norms" \
        test "$(grep -c '"grad_sqnorm_local_mean":null,"grad_sqnorm_global":null' "$W/acc/metrics.jsonl")" = 6
    # an evaluation that takes the number of test samples: periodic ones on SCV_EVAL_SUBSET, and with
    # SCV_FINAL_EVAL=1 one on the whole set at the stop, before the checkpoint (role final)
    TW_EVAL=subset SCV_EVAL_SUBSET=50 SCV_FINAL_EVAL=1 SCV_UNTIL_ITERATIONS=10 wrap 2 "$W/sub" ||
        { nok "wrappers: SCV_EVAL_SUBSET and SCV_FINAL_EVAL at K=2 exit 0"; sed 's/^/#   /' "$W/sub/out"; }
    check "wrappers: periodic evaluations on SCV_EVAL_SUBSET=50 (\"set\":\"subset\"), the final one on the whole set last" $PY - "$W/sub/metrics.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev = [l for l in lines if l["type"] == "eval"]
per = [l for l in ev if l["role"] == "periodic"]
assert len(per) == 2 and all(l["set"] == "subset" and l["n"] == 50 and 0 <= l["test_accuracy"] <= 1 for l in per), per
last = lines[-1]
assert last["type"] == "eval" and last["role"] == "final" and last["set"] == "full" and last["iter"] == 10, last
assert sum(l["role"] == "final" for l in ev) == 1, ev
EOF
    check "wrappers: the evaluations leave the weights as plain training's" $PY $TW check "$W/sub" 32x10
    # SCV_EVAL_MAX_SHARE: an evaluation of 0.2 s due at every iteration, kept to 20% of the time
    # (skipped while over it, the same ones on both workers)
    TW_EVAL=slow SCV_EVAL_EVERY_EPOCHS=0.16 SCV_EVAL_MAX_SHARE=0.2 SCV_UNTIL_ITERATIONS=12 wrap 2 "$W/share" ||
        { nok "wrappers: SCV_EVAL_MAX_SHARE at K=2 exits 0"; sed 's/^/#   /' "$W/share/out"; }
    check "wrappers: SCV_EVAL_MAX_SHARE=0.2 skips due evaluations (11 due, 0.2 s each)" $PY - "$W/share/metrics.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
per = [l for l in lines if l["type"] == "eval" and l["role"] == "periodic"]
wall = max(l["ts"] for l in lines if "ts" in l) - min(l["ts"] for l in lines if "ts" in l)
assert 1 <= len(per) <= 6, (len(per), wall)  # without the share: 11
EOF
    # Scavenger's stop: SIGUSR1 to mpirun mid-run; every worker stops at the same iteration
    SCV_BATCH=16 wrap 2 "$W/sig" &
    TP=$!
    n=0; while [ $n -lt 300 ] && ! grep -q '"iter":30,' "$W/sig/metrics.jsonl" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
    kill -USR1 "$(cat "$W/sig/mpirun.pid")" 2>/dev/null
    wait $TP; rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 138 ]; then ok "wrappers: SIGUSR1 to mpirun stops the user's loop (mpirun exit $rc)"
    else nok "wrappers: SIGUSR1 to mpirun stops the user's loop (got $rc)"; sed 's/^/#   /' "$W/sig/out"; fi
    check "wrappers: after SIGUSR1 every worker exited 0, state at the last iter line" wrapped_state "$W/sig"
else
    nok "wrappers at K=1 and K=2: no mpirun (scripts/install-deps.sh installs Open MPI)"
fi
# the two converted PyTorch examples (examples/mnist_main.py, examples/ddp_multigpu_torchrun.py) at K=2
# for a few iterations: they run under the contract's variables and write the lines it requires
example() { # example NAME ARGS...: K=2 (K=1 without mpirun), B=64, 3 iterations, in $T/ex-NAME
    d=$T/ex-$1${EX_TAG:-}; mkdir -p "$d"; f=$(pwd)/examples/$1.py; shift
    k=2; [ "$HAVE_MPI" = 1 ] || k=1
    (cd "$d" && PYTHONPATH=$OLDPWD/python SCV_WORKERS=$k SCV_BATCH=64 SCV_SEED=1 SCV_METRICS=$d/m.jsonl SCV_CHECKPOINT_DIR=$d \
        SCV_UNTIL_ITERATIONS=3 SCV_EVAL_EVERY_EPOCHS=${EX_EVAL_EVERY:-0} SCV_EVAL_SUBSET=${EX_EVAL_SUBSET:-0} \
        SCV_MASTER_ADDR=127.0.0.1 SCV_MASTER_PORT=$(free_port) \
        timeout 120 $(if [ "$HAVE_MPI" = 1 ]; then echo mpirun --oversubscribe -np 2; fi) $PY "$f" "$@" \
        >"$d/out" 2>&1) || { cat "$d/out"; return 1; }
    wrapped_fields "$d/m.jsonl" $k "$N_TRAIN" "$PARAMS" &&
        [ "$(grep -c '"type":"iter"' "$d/m.jsonl")" = 3 ] && grep -q '"iteration": 3' "$d/scavenger-state.json"
}
N_TRAIN=60000 PARAMS=1199882 check "examples/mnist_main.py (PyTorch's MNIST example, converted): 3 iterations at K=2 under the contract" example mnist_main
N_TRAIN=60000 PARAMS=7850 check "examples/ddp_multigpu_torchrun.py (PyTorch's DDP tutorial, converted): 3 iterations at K=2 under the contract" example ddp_multigpu_torchrun 50 10
# --- (j) the trained model and the subset evaluation (issue 38, 16; tests/torch_model.py):
# scv.DDP's state_dict without DDP's "module." prefix (what the MNIST example's --save-model
# writes loads into Net()), load_model on the checkpoint, and scv.evaluate on the first n samples
# shared among the workers; then the MNIST example's periodic evaluation through it
TM=tests/torch_model.py
check "model: scv.DDP's state_dict loads into the plain model (a file too); a prefixed one loads both ways; load_model" \
    $PY $TM state
check "evaluate: the first 37 of 100 samples (a Dataset, a DataLoader), all for 0 and 1000, the mode put back (K=1)" \
    $PY $TM evaluate "$T/ev1"
if [ "$HAVE_MPI" = 1 ]; then
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 120 mpirun --oversubscribe -np 2 $PY $TM evaluate "$T/ev2" \
        >"$T/ev2.out" 2>&1 || { nok "evaluate at K=2 exits 0"; sed 's/^/#   /' "$T/ev2.out"; }
    check "evaluate at K=2: each worker its share, the same figures on both as at K=1" $PY - "$T/ev1.0" "$T/ev2.0" "$T/ev2.1" <<'EOF'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:4])
assert b["workers"] == c["workers"] == 2 and b["r"] == c["r"], (b, c)
assert a["r"]["n"] == b["r"]["n"] == 37 and a["r"]["test_accuracy"] == b["r"]["test_accuracy"], (a, b)
assert abs(a["r"]["test_loss"] - b["r"]["test_loss"]) < 1e-6, (a, b)
EOF
fi
ex_eval() { # the MNIST example with a periodic evaluation due in its 3 iterations, on 100 test samples
    example mnist_main && $PY - "$T/ex-mnist_main$EX_TAG/m.jsonl" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"type":"eval"' in l]
per = [l for l in ev if l["role"] == "periodic"]
assert per and all(l["set"] == "subset" and l["n"] == 100 and 0 <= l["test_accuracy"] <= 1 and l["test_loss"] > 0
                   for l in per), ev
EOF
}
EX_TAG=-eval EX_EVAL_EVERY=0.003 EX_EVAL_SUBSET=100 N_TRAIN=60000 PARAMS=1199882 check \
    "examples/mnist_main.py: its periodic evaluation on the first SCV_EVAL_SUBSET=100 test samples (scv.evaluate)" ex_eval
check "wrappers: the loader's plan gives every worker a sample (a last batch smaller than K joins the one before); each sample once" $PY - <<'EOF'
import sys; sys.path.insert(0, "python")
import torch
import scavenger.torch as scv
from scavenger import trainer as t
n = 200
for K, B, w in ((3, 66, None), (2, 199, None), (4, 50, [1, 2, 3, 4]), (3, 7, None)):
    parts = []
    for r in range(K):
        scv._S = scv._Session(t.Env(workers=K, rank=r, batch=B, split=w, seed=5), True, torch.device("cpu"))
        scv._S.batch_from_env = True
        ld = scv.DataLoader(list(range(n)), batch_size=B)
        parts.append(ld.scv_plan.steps())
    steps = len(parts[0])
    assert all(len(p) == steps for p in parts)
    got = []
    for i in range(steps):
        Bc = parts[0][i][1]
        assert all(p[i][1] == Bc for p in parts) and sum(p[i][2] for p in parts) == Bc
        assert all(len(p[i][0]) == p[i][2] > 0 for p in parts), (K, B, i, [p[i][2] for p in parts])
        assert Bc == B or i == steps - 1, (K, B, i, Bc)
        for p in parts:
            got.extend(p[i][0])
    assert sorted(got) == list(range(n)) and got == t.epoch_order(n, 5, 0).tolist(), (K, B)
scv._S = None
EOF
usage_wrapped() { # usage_wrapped VAR=VALUE TEXT: the wrapper path exits 2 naming the variable
    out=$(cd "$T" && env "$1" SCV_WORKERS=1 timeout 60 $PY "$OLDPWD/$TW" train 2>&1); rc=$?
    [ $rc -eq 2 ] && printf '%s' "$out" | grep -q "$2" || { echo "exit $rc: $out"; return 1; }
}
check "wrappers: SCV_BATCH=12x exits 2 naming SCV_BATCH" usage_wrapped SCV_BATCH=12x SCV_BATCH
check "wrappers: SCV_RESUME=1 without a checkpoint exits 2" usage_wrapped SCV_RESUME=1 "SCV_RESUME=1 needs SCV_CHECKPOINT_DIR"
probe_wrapped() {
    mkdir -p "$T/wprobe"
    SCV_PROBE=1 SCV_BATCH=32 SCV_METRICS=$T/wprobe/m.jsonl SCV_CHECKPOINT_DIR=$T/wprobe timeout 60 $PY $TW train || return 1
    [ "$(grep -c '"type":"job"' "$T/wprobe/m.jsonl")" = 1 ] && [ "$(grep -c '"type":"iter"' "$T/wprobe/m.jsonl")" = 1 ] &&
        [ ! -e "$T/wprobe/checkpoint.pt" ]
}
check "wrappers: SCV_PROBE=1: the job line and one iteration, no checkpoint" probe_wrapped
# the stop (os._exit) ends the DataLoader's worker processes first: a persistent worker left
# lived on until its watchdog saw the trainer gone (5 s), holding the rank's output pipes,
# which mpirun waits for: every stop took 5 s longer
loader_workers_end() {
    d=$T/wend; mkdir -p "$d"
    SCV_WORKERS=1 SCV_METRICS=$d/metrics.jsonl SCV_CHECKPOINT_DIR=$d SCV_SEED=5 SCV_UNTIL_ITERATIONS=12 SCV_BATCH=32 \
        TW_WORKER_PIDS=$d/workers timeout 60 $PY $TW train >"$d/out" 2>&1 || { cat "$d/out"; return 1; }
    [ -s "$d/workers" ] || { echo "no DataLoader worker noted its pid"; return 1; }
    for p in $(cat "$d/workers"); do
        if kill -0 "$p" 2>/dev/null; then echo "DataLoader worker $p alive after the trainer's exit"; return 1; fi
    done
}
check "wrappers: the stop ends the DataLoader's worker process with the trainer" loader_workers_end
check "wrappers: on CUDA with NCCL when there is a GPU, else the CPU with gloo: plain training's weights, statistics on the gradients' device" \
    timeout 60 $PY $TW device

finish
