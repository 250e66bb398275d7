#!/bin/sh
# The planner's prediction of a compressed iteration against the measured one (issue 14):
# MLP 784-256-128-10, B=256, on 4 emulated c5.xlarge VMs (78 Mbit/s). Dense profiles at
# K=1,2,4; `plan --compress none,topk:100:allgather` at K=4; then a Top-k 100x run at K=4,
# its median iteration time. Needs root (the emulated cluster). SCV_BIN: the binary.
set -e
cd "$(dirname "$0")/.."
S=${SCV_BIN:-$PWD/build/scavenger}
$S cluster up --name pc --vm c5.xlarge:4 >/dev/null
trap '$S cluster down --name pc >/dev/null' EXIT
D=$(mktemp -d)
for K in 1 2 4; do
  $S train --cluster pc --workers $K --batch 256 --model mlp --iterations 80 --progress never --metrics $D/k$K.jsonl --vm-type c5.xlarge >/dev/null
done
$S train --cluster pc --workers 4 --batch 256 --model mlp --iterations 200 --progress never --metrics $D/topk.jsonl --compress topk:100 --collective allgather >/dev/null
$S plan --profile $D/k1.jsonl,$D/k2.jsonl,$D/k4.jsonl --measured-on c5.xlarge --target-epochs 5 --workers 4 --batch 256 --compress none,topk:100:allgather --all --json > $D/plan.json
/usr/bin/python3 - $D <<'PY'
import json, sys, statistics as st
d = sys.argv[1]
plan = json.load(open(f"{d}/plan.json"))
its = [json.loads(l) for l in open(f"{d}/topk.jsonl") if '"type":"iter"' in l][40:]
meas = st.median(o["t_iter"] for o in its)
dens = [json.loads(l) for l in open(f"{d}/k4.jsonl") if '"type":"iter"' in l][10:]
for p in plan["points"]:
    name = (p.get("comm") or {}).get("name", "dense")
    print(f"{name}: predicted t_iter {1e3 * p['t_iter']:.1f} ms (t_comm {1e3 * p['comm']['t_comm']:.1f} ms)")
print(f"perf model: alpha {1e3 * plan['perf']['alpha']:.2f} ms, alpha_msg (probed) {1e3 * plan['perf']['alpha_msg']:.3f} ms, 1/beta {1e-6 / plan['perf']['beta']:.2f} MB/s")
tk = lambda k: 1e3 * st.median(o[k] for o in its)
print(f"measured Top-k: t_compute {tk('t_compute'):.1f} ms, t_comm {tk('t_comm'):.1f} ms, t_compress {tk('t_compress'):.2f} ms")
share = [o["t_compress"] / o["t_iter"] for o in its]
print(f"compression kernels' share of an iteration: median {100 * st.median(share):.2f}%, mean {100 * st.mean(share):.2f}%")
print(f"measured median t_iter: topk:100 {1e3 * meas:.1f} ms (iterations 41-200), dense {1e3 * st.median(o['t_iter'] for o in dens):.1f} ms")
tp = next(p for p in plan['points'] if p.get('comm', {}).get('kind') == 'topk')
print(f"predicted / measured Top-k t_iter: {tp['t_iter'] / meas:.2f}")
PY
