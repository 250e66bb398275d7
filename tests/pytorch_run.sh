#!/bin/sh
# tests/pytorch_run.sh - the PyTorch example (examples/pytorch_fashion_mnist.py) driven by
# `scavenger run --exec` (tests/pytorch.sh holds the module's own checks; the two run side by
# side in `make check`): (g) the whole loop, warm-up, search, plan and training to the target,
# about 25 s on 2 cores; (h) the same with a worker killed in training, resumed from its
# checkpoint, about 45 s. Run from the repository root:
#   sh tests/pytorch_run.sh
# Prints "ok - NAME" / "not ok - NAME" per check and "N passed, N failed" last; exits non-zero
# on a failure. Needs what tests/pytorch.sh needs (a missing one is a failure, not a skip).
WHAT="pytorch runs" KEEP=SCV_BIN TMPNAME=pytorch-run
[ -f tests/pytorch_lib.sh ] || cd "$(dirname "$0")/.." || exit 1 # (started elsewhere: its checkout)
. tests/pytorch_lib.sh

# --- (g) the issue's end-to-end case: `scavenger run --exec` drives this example (8000 training
# samples) over a 2 x 2 space through the whole loop: warm-up, every configuration profiled
# (K=1 B=128 may be ruled out, said so, once the target's forecast puts it over 2x the best
# measured), plan, training to the target; the module's metrics carry the noise statistics
# the plan uses
e2e() {
    BIN=${SCV_BIN:-build/scavenger}
    out=$("$BIN" run --db "$T/e2e.db" --exec "$PY $EX --subset 8000" --workers 1,2 --batch 64,128 \
        --target-accuracy 0.84 --search full --search-budget 0 2>&1) || { echo "$out"; return 1; }
    for want in "warmup  K=2 B=64" "search  K=1 B=64" "search  K=2 B=128" "train " "target reached"; do
        printf '%s' "$out" | grep -q "$want" || { echo "no '$want' in: $out"; return 1; }
    done
    printf '%s' "$out" | grep -qE "search  K=1 B=128|K=1, B=128 skipped: predicted .* over 2.0x the best measured" ||
        { echo "K=1 B=128 neither profiled nor ruled out in: $out"; return 1; }
    grep -q '"reached":true' "$T/e2e.db.runs/1/report.json" &&
        ! grep -q '"grad_sqnorm_global": *null' "$T/e2e.db.runs/1/seg-000-warmup-k2-b64.jsonl" &&
        grep -q '"iteration"' "$T/e2e.db.runs/1/ckpt/scavenger-state.json" || return 1
    # the report: the measured noise scale, and a prediction for each of the 4 configurations
    $PY - "$T/e2e.db.runs/1/report.json" <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
st = r["stat"]
assert st["kind"] == "gns" and 1 <= st["b_simple"] < 1e6, st
got = sorted((p["workers"], p["batch"]) for p in r["points"])
assert got == [(1, 64), (1, 128), (2, 64), (2, 128)], got
for p in r["points"]:
    assert p["t_iter"] > 0 and p["iterations"] > 0 and p["time_s"] > 0 and p["cost"] > 0, p
assert r["predicted_time_s"] > 0 and (r["chosen"]["workers"], r["chosen"]["batch"]) in got, r["chosen"]
print("noise scale B_simple %.1f; chosen K=%d B=%d, predicted %.1f s" % (st["b_simple"], r["chosen"]["workers"],
      r["chosen"]["batch"], r["predicted_time_s"]))
EOF
}
check "scavenger run --exec drives the example through warm-up, search, plan and training to the target" e2e

# --- (h) one PyTorch worker (rank 1 of 2) killed with SIGKILL in a training segment of
# `scavenger run --exec`: the run retries the segment from the trainer's last checkpoint
# (--checkpoint-every 20: one written during the killed segment) and reaches the target.
# rank_pid DIR RANK: the pid of the example's process of that rank whose SCV_METRICS is under DIR
rank_pid() {
    for e in /proc/[0-9]*/environ; do
        tr '\0' '\n' <"$e" 2>/dev/null | grep -q "^SCV_METRICS=$1/" &&
            tr '\0' '\n' <"$e" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" &&
            grep -q pytorch_fashion_mnist "${e%environ}cmdline" 2>/dev/null && { p=${e#/proc/}; echo "${p%/environ}"; return 0; }
    done
    return 1
}
kill_resume() {
    BIN=${SCV_BIN:-build/scavenger}
    d=$T/kill
    mkdir -p "$d"
    "$BIN" run --db "$d/k.db" --exec "$PY $EX --subset 8000 --checkpoint-every 20" --workers 2 --batch 128 \
        --target-accuracy 0.84 >"$d/run.log" 2>&1 &
    rp=$!
    R=$d/k.db.runs/1
    n=0 victim="" seg=""
    while [ $n -lt 1200 ] && [ -z "$victim" ] && kill -0 $rp 2>/dev/null; do
        seg=$(ls "$R"/seg-*-train-*.jsonl 2>/dev/null | head -n 1)
        if [ -n "$seg" ] && [ "$(grep -c '"type":"iter"' "$seg")" -ge 50 ]; then
            victim=$(rank_pid "$R" 1) && kill -KILL "$victim" || victim=""
        fi
        sleep 0.1; n=$((n + 1))
    done
    wait $rp; rc=$?
    [ -n "$victim" ] || { echo "no rank 1 to kill in a training segment (exit $rc)"; cat "$d/run.log"; return 1; }
    [ $rc -eq 0 ] || { echo "exit $rc"; cat "$d/run.log"; return 1; }
    grep -q "a worker died or the job failed; resuming from the last checkpoint (retry 1 of" "$d/run.log" &&
        grep -q "target reached" "$d/run.log" && grep -q '"reached":true' "$R/report.json" ||
        { cat "$d/run.log"; return 1; }
    # the retry's first iteration follows a checkpoint written in the killed segment, at its data position
    $PY - "$seg" "${seg%.jsonl}-retry1.jsonl" <<'EOF'
import json, sys
killed, retry = ([json.loads(l) for l in open(p) if '"type":"iter"' in l] for p in sys.argv[1:3])
first, last, resumed = killed[0]["iter"], killed[-1]["iter"], retry[0]["iter"]
print("killed segment: iterations %d..%d; the retry starts at %d" % (first, last, resumed))
assert first + 20 <= resumed <= last + 1, "not resumed from a checkpoint of the killed segment"
assert retry[0]["samples_seen"] - retry[0]["batch"] == killed[resumed - first - 1]["samples_seen"], "data position lost"
EOF
}
check "a PyTorch worker killed (SIGKILL) in training: the run resumes from its checkpoint and reaches the target" kill_resume
finish
