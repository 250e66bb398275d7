#!/bin/sh
# Load test of `scavenger serve` (loopback only, fixed duration) with apache2-utils' ab: 64
# keep-alive connections on the runs list and on a run's detail, first with the service
# idle, then while a run trains; prints requests/s, p50 and p99 latency and the failed
# requests of each, and the training run's mean iteration time against the same job trained
# with the service idle (unchanged within noise is the goal). Then the limits (issue 24, 2
# and 3): the runs list while 500 slow clients (from 127.0.0.2..11, 50 each, a byte every 5
# s, reconnecting when cut) hold connections open, and oversized requests (an /api/plan space
# of every VM type x 1..1024 workers: 422 at once; a body over --max-body: 413) timed.
# Usage: bench/serve_load.sh [DURATION_S (default 10)]   (SCV_BIN: the scavenger binary)
set -eu
BIN=${SCV_BIN:-build/scavenger}
DUR=${1:-10}
command -v ab >/dev/null || { echo "serve_load: needs ab (apt-get install apache2-utils)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TMP=$(mktemp -d /tmp/scv-bench-serve-XXXXXX)
SERVER=""
SLOW=""
cleanup() {
    if [ -n "$SLOW" ]; then kill "$SLOW" 2>/dev/null || true; fi
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
"$BIN" serve --listen 127.0.0.1:0 --db "$TMP/runs.db" --port-file "$TMP/port" >"$TMP/serve.log" 2>&1 &
SERVER=$!
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PORT=$(cat "$TMP/port") TOKEN=$(cat "$TMP/runs.db.token")
URL="http://127.0.0.1:$PORT"
JOB='{"model":"mlp","hidden":"256,256","dataset":"synthetic:8000","lr":0.0005,"target-accuracy":0.9,"workers":"2","batch":"128"}'

submit() { # job -> run id once it finished ("" on failure)
    sub=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" --data "$1" "$URL/api/runs" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
    while :; do
        s=$(curl -s "$URL/api/submissions/$sub")
        case "$s" in *'"state":"queued"'* | *'"state":"running"'*) sleep 0.2 ;; *) break ;; esac
    done
    printf '%s' "$s" | sed -n 's/.*"run":\([0-9][0-9]*\).*/\1/p'
}
t_iter() { # mean iteration time of a run's steps (warm-up and training: both at the start configuration), ms
    curl -s "$URL/api/runs/$1" | python3 -c 'import json,sys
d=json.load(sys.stdin); s=[x for x in d["steps"] if x["t_iter"]]
n=sum(x["iterations"] for x in s)
print("%.3f" % (1e3*sum(x["t_iter"]*x["iterations"] for x in s)/n) if n else
      "nan (status %s, %d steps)" % (d["run"]["status"], len(d["steps"])))'
}
load() { # name path
    # ab at nice 15: the clients stand for other machines, not for work on the training host
    nice -n 15 ab -q -k -c 64 -t "$DUR" -n 10000000 "$URL$2" >"$TMP/ab.txt" 2>&1 || true
    rps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$TMP/ab.txt")
    # ab counts a body whose length differs from the first one's as failed ("Length"): the
    # runs list of a training run changes as it goes; connect, receive and exceptions are errors
    fails=$(sed -n 's/.*(Connect: \([0-9]*\), Receive: \([0-9]*\), Length: [0-9]*, Exceptions: \([0-9]*\)).*/\1 \2 \3/p' "$TMP/ab.txt" |
        awk '{print $1 + $2 + $3}')
    [ -n "$fails" ] || fails=$(sed -n 's/^Failed requests: *\([0-9]*\).*/\1/p' "$TMP/ab.txt")
    lens=$(sed -n 's/.*Length: \([0-9]*\),.*/\1/p' "$TMP/ab.txt")
    non2xx=$(sed -n 's/^Non-2xx responses: *\([0-9]*\).*/\1/p' "$TMP/ab.txt")
    p50=$(sed -n 's/^ *50% *\([0-9]*\).*/\1/p' "$TMP/ab.txt")
    p99=$(sed -n 's/^ *99% *\([0-9]*\).*/\1/p' "$TMP/ab.txt")
    printf '%-34s %10s req/s  p50 %4s ms  p99 %4s ms  failed %s  non-2xx %s  bodies of another length %s\n' \
        "$1" "$rps" "$p50" "$p99" "${fails:-?}" "${non2xx:-0}" "${lens:-0}"
}
echo "# scavenger serve load test: ab -k -c 64 -t $DUR, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
REF=$(submit "$JOB")                    # a stored run to read, and the idle reference
for i in 1 2 3 4 5 6 7 8; do submit '{"model":"logreg","dataset":"synthetic:500","target-accuracy":0.5,"workers":"1,2","batch":"32"}' >/dev/null; done
load "idle: GET /api/runs" /api/runs
load "idle: GET /api/runs/$REF" "/api/runs/$REF"
curl -s -X POST -H "Authorization: Bearer $TOKEN" --data "$JOB" "$URL/api/runs" >/dev/null
sleep 1
load "training: GET /api/runs" /api/runs
load "training: GET /api/runs/$REF" "/api/runs/$REF"
while curl -s "$URL/api/submissions" | grep -q '"state":"running"'; do sleep 0.5; done
LAST=$(curl -s "$URL/api/runs?limit=1" | sed -n 's/^{"runs":\[{"id":\([0-9]*\),.*/\1/p')
echo "training iteration time: idle service $(t_iter "$REF") ms, under load $(t_iter "$LAST") ms (run $REF vs $LAST)"

# ---- slow clients and oversized requests ----
cat >"$TMP/slow.py" <<'PY'
# N connections from 127.0.0.2.. (50 per address), each sending one byte of a request every
# 5 s; a connection cut by the service is opened again. Prints how many are open, each second.
import socket, sys, time
port, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def conn(i):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (2 + i // 50), 0))
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port)); s.send(b"G"); s.setblocking(False); return s
    except OSError:
        s.close(); return None
socks = [conn(i) for i in range(n)]
msg = b"ET /api/runs HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
pos, last = 0, 0
while True:
    now = time.time()
    if now - last >= 5:
        last, pos = now, pos + 1
        for i, s in enumerate(socks):
            try:
                if s is None: raise OSError
                if s.recv(1, socket.MSG_PEEK) == b"": raise OSError
            except BlockingIOError:
                pass
            except OSError:
                if s: s.close()
                socks[i] = conn(i); continue
            try: s.send(msg[pos % len(msg):pos % len(msg) + 1])
            except OSError: s.close(); socks[i] = None
    with open(out, "w") as f: f.write("%d\n" % sum(s is not None for s in socks))
    time.sleep(1)
PY
python3 "$TMP/slow.py" "$PORT" 500 "$TMP/slow.open" &
SLOW=$!
sleep 3
echo "slow clients open: $(cat "$TMP/slow.open" 2>/dev/null || echo ?) of 500 (a byte every 5 s each)"
load "500 slow clients: GET /api/runs" /api/runs
echo "slow clients open after: $(cat "$TMP/slow.open" 2>/dev/null || echo ?) of 500"
python3 - "$URL" "$TOKEN" <<'PY'
import json, sys, time, urllib.request, urllib.error
url, tok = sys.argv[1], sys.argv[2]
def post(path, body):
    rq = urllib.request.Request(url + path, data=body, headers={"Authorization": "Bearer " + tok})
    t0 = time.time()
    try:
        r = urllib.request.urlopen(rq, timeout=60); code, text = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read()
    except (urllib.error.URLError, OSError) as e:  # closed before the body was sent, no answer
        code, text = 0, str(e).encode()
    return code, time.time() - t0, len(text), text[:160].decode(errors="replace")
def metrics(K, B):  # a job line and 12 iterations at (K, B), as test_service's
    t = json.dumps({"type": "job", "model": "mlp", "arch": "mlp:784-32-10", "params": 25450, "act_bytes": 296,
                    "input_floats": 784, "n_train": 2000, "vm": "c5.xlarge", "threads": 1, "workers": K, "batch": B}) + "\n"
    b = B / K
    for i in range(1, 13):
        tc, tm = 1e-3 + 2e-5 * b, 2e-4 if K > 1 else 1e-5
        t += json.dumps({"type": "iter", "iter": i, "epoch_progress": i * B / 2000, "workers": K, "batch": B,
                         "t_compute": tc, "t_comm": tm, "t_iter": tc + tm + 1e-5, "loss": 1.5,
                         "grad_sqnorm_local_mean": 1 + 100 / b + 0.01 * (i % 3), "grad_sqnorm_global": 1 + 100 / B + 0.01 * (i % 2)}) + "\n"
    return t
big = json.dumps({"metrics": [metrics(1, 64), metrics(2, 64)], "target_epochs": 2, "vm": "all", "workers": "1..1024", "batch": "32..4096", "all": True})
for name, path, body in [("plan over every VM type x 1..1024 workers", "/api/plan", big.encode()),
                         ("a 2 MiB body", "/api/runs", b"{" + b" " * (2 << 20) + b"}")]:
    code, dt, n, head = post(path, body)
    print("oversized: %-42s -> %d in %.3f s (%d bytes): %s" % (name, code, dt, n, head))
PY
kill "$SLOW" 2>/dev/null || true
wait "$SLOW" 2>/dev/null || true
SLOW=""
curl -s "$URL/api/health" | grep -q '"ok":true' && echo "service up after the load"
