#!/bin/sh
# Load test of `scavenger serve` (loopback only, fixed duration) with apache2-utils' ab: 64
# keep-alive connections on the runs list and on a run's detail, first with the service
# idle, then while a run trains; prints requests/s, p50 and p99 latency and the failed
# requests of each, and the training run's mean iteration time against the same job trained
# with the service idle (unchanged within noise is the goal). Then the limits (issue 24, 2
# and 3): the runs list while 500 slow clients (from 127.0.0.2..11, 50 each, a byte every 5
# s, reconnecting when cut) hold connections open, and oversized requests (an /api/plan space
# of every VM type x 1..1024 workers: 422 at once; a body over --max-body: 413) timed.
# Then the client mixes of issue 38 (items 2 and 3), MIX_S seconds each (default 20), with
# /api/health probed every 0.2 s (a new connection each, 5 s timeout: p50, p99, the slowest,
# the unanswered) and the service's memory sampled every 0.5 s (the largest VmRSS, VmHWM):
#   idle        the probe alone;
#   slow        9 addresses (127.0.0.2..10: all of 127/8 is loopback) x 127 slow sockets,
#               each sending a byte of a request every 5 s, reconnecting when cut;
#   streams     320 event streams of a training run (reconnecting when refused or ended,
#               after the Retry-After): accepted, refused, bytes received;
#   plans       64 clients posting, each in a loop, a plan of every VM type x 128 workers x
#               10 batch sizes (94,720 points) with the token: planned, refused (503);
#   all         the three together.
# The clients run at nice 15 (they stand for other machines), the probe at nice 0 (a monitor
# of this host); the service and a training run (MLP 256-256, K up to 2, an unreachable
# target: it trains through every mix, then is stopped) share the cores with them.
# Usage: bench/serve_load.sh [DURATION_S (default 10)]   (SCV_BIN: the scavenger binary;
#        MIX_S: seconds of each mix; SCV_BENCH_ONLY=mix: the mixes only)
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
if [ "${SCV_BENCH_ONLY:-}" != mix ]; then
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
fi

# ---- the client mixes of issue 38 ----
MIX_S=${MIX_S:-20}
cat >"$TMP/mix.py" <<'PY'
# One kind of client for SECONDS, its summary as JSON in OUT: mix.py KIND PORT SECONDS OUT [ARGS]
#   probe                 GET /api/health every 0.2 s, a new connection each (5 s timeout)
#   slow ADDRS PER        ADDRS x PER sockets from 127.0.0.2.., a byte of a request every 5 s each,
#                         reconnecting when cut
#   streams N RUN         N event streams of run RUN, reconnecting when refused or ended
#   plans N TOKEN         N clients posting a plan of 74 types x 128 workers x 10 batches in a loop
import json, socket, sys, threading, time
kind, port, secs, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
args = sys.argv[5:]
end = time.time() + secs
def request(method, path, body=b"", token=None, timeout=5.0):
    """(status, headers+body bytes) of one HTTP/1.0 request; status 0: no answer"""
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.connect(("127.0.0.1", port))
        head = "%s %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n" % (method, path, port)
        if token: head += "Authorization: Bearer %s\r\n" % token
        if body: head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        s.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while True:
            c = s.recv(65536)
            if not c: break
            data += c
        st = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else 0
        return st, data
    except (OSError, ValueError, IndexError):
        return 0, b""
    finally:
        s.close()
def probe():
    lat, failed = [], 0
    while time.time() < end:
        t0 = time.time()
        st, _ = request("GET", "/api/health")
        dt = time.time() - t0
        if st == 200: lat.append(dt)
        else: failed += 1
        time.sleep(max(0, 0.2 - dt))
    lat.sort()
    q = lambda p: round(1e3 * lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else None
    return {"probes": len(lat) + failed, "failed": failed, "p50_ms": q(0.5), "p99_ms": q(0.99),
            "max_ms": round(1e3 * lat[-1], 1) if lat else None}
def slow(addrs, per):
    n, msg = addrs * per, b"ET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
    def conn(i):
        s = socket.socket()
        try:
            s.bind(("127.0.0.%d" % (2 + i // per), 0)); s.settimeout(2)
            s.connect(("127.0.0.1", port)); s.send(b"G"); s.setblocking(False); return s
        except OSError:
            s.close(); return None
    socks, pos, last, opened, open_sum, samples = [conn(i) for i in range(n)], 0, 0, n, 0, 0
    while time.time() < end:
        now = time.time()
        cut = []
        for i, s in enumerate(socks):
            try:
                if s is None or s.recv(1, socket.MSG_PEEK) == b"": raise OSError
            except BlockingIOError:
                continue
            except OSError:
                cut.append(i)
        for i in cut:  # reconnect at once what the service closed
            if socks[i]: socks[i].close()
            socks[i] = conn(i); opened += 1
        if now - last >= 5:
            last, pos = now, pos + 1
            for i, s in enumerate(socks):
                try:
                    if s: s.send(msg[pos % len(msg):pos % len(msg) + 1])
                except OSError:
                    pass
        open_sum += sum(s is not None for s in socks); samples += 1
        time.sleep(0.2)
    for s in socks:
        if s: s.close()
    return {"sockets": n, "connections_opened": opened, "open_mean": round(open_sum / max(samples, 1))}
def streams(n, run):
    stats = {"accepted": 0, "refused": 0, "bytes": 0, "events": 0}
    lock = threading.Lock()
    def one():
        while time.time() < end:
            s = socket.socket(); s.settimeout(2)
            retry = 1.0
            try:
                s.connect(("127.0.0.1", port))
                s.sendall(("GET /api/runs/%s/events HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n" % (run, port)).encode())
                data = s.recv(65536)
                ok = data.startswith(b"HTTP/1.1 200") or data.startswith(b"HTTP/1.0 200")
                with lock:
                    stats["accepted" if ok else "refused"] += 1
                if not ok:
                    h = data.split(b"\r\n\r\n")[0].lower()
                    if b"retry-after: " in h: retry = float(h.split(b"retry-after: ")[1].split(b"\r\n")[0])
                while ok and data and time.time() < end:
                    with lock:
                        stats["bytes"] += len(data); stats["events"] += data.count(b"\n\n")
                    data = b""
                    while not data and time.time() < end:
                        try:
                            data = s.recv(65536)
                            if not data: break  # ended: reconnect
                        except socket.timeout:
                            pass
            except OSError:
                pass
            finally:
                s.close()
            time.sleep(min(retry, max(0, end - time.time())))
    th = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in th: t.start()
    for t in th: t.join(secs + 5)
    stats["mb"] = round(stats["bytes"] / 1e6, 2)
    return stats
def plans(n, token):
    def metrics(K, B):  # a job line and 12 iterations at (K, B), as test_service's
        t = json.dumps({"type": "job", "model": "mlp", "arch": "mlp:784-32-10", "params": 25450, "act_bytes": 296,
                        "input_floats": 784, "n_train": 2000, "vm": "c5.xlarge", "threads": 1, "workers": K, "batch": B}) + "\n"
        b = B / K
        for i in range(1, 13):
            tc, tm = 1e-3 + 2e-5 * b, 2e-4 if K > 1 else 1e-5
            t += json.dumps({"type": "iter", "iter": i, "epoch_progress": i * B / 2000, "workers": K, "batch": B,
                             "t_compute": tc, "t_comm": tm, "t_iter": tc + tm + 1e-5, "loss": 1.5,
                             "grad_sqnorm_local_mean": 1 + 100 / b + 0.01 * (i % 3),
                             "grad_sqnorm_global": 1 + 100 / B + 0.01 * (i % 2)}) + "\n"
        return t
    body = json.dumps({"metrics": [metrics(1, 64), metrics(2, 64)], "target_epochs": 2, "vm": "all",
                       "workers": "1..128", "batch": [32, 64, 96, 128, 192, 256, 384, 512, 768, 1024],
                       "all": True}).encode()
    stats, lock = {"planned": 0, "busy_503": 0, "other": 0}, threading.Lock()
    def one():
        while time.time() < end:
            st, data = request("POST", "/api/plan", body, token, timeout=30)
            with lock:
                k = "planned" if st == 200 else "busy_503" if st == 503 else "other"
                stats[k] += 1
            if st == 503: time.sleep(1)  # its Retry-After
    th = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in th: t.start()
    for t in th: t.join(secs + 35)
    return stats
res = {"probe": probe, "slow": lambda: slow(int(args[0]), int(args[1])), "streams": lambda: streams(int(args[0]), args[1]),
       "plans": lambda: plans(int(args[0]), args[1])}[kind]()
with open(out, "w") as f: json.dump(res, f)
PY
mem() { # the service's largest VmRSS while FILE exists, into FILE.max (kB)
    m=0
    while [ -e "$1" ]; do
        r=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$SERVER/status" 2>/dev/null || echo 0)
        [ "${r:-0}" -gt "$m" ] && m=$r
        sleep 0.5
    done
    echo "$m" >"$1.max"
}
mix() { # name, then the kinds of clients besides the probe ("slow", "streams", "plans")
    name=$1
    shift
    touch "$TMP/mem.on"
    mem "$TMP/mem.on" &
    MEM=$!
    pids=""
    for k in "$@"; do
        case $k in
        slow) nice -n 15 python3 "$TMP/mix.py" slow "$PORT" "$MIX_S" "$TMP/slow.json" 9 127 & ;;
        streams) nice -n 15 python3 "$TMP/mix.py" streams "$PORT" "$MIX_S" "$TMP/streams.json" 320 "$LIVE" & ;;
        plans) nice -n 15 python3 "$TMP/mix.py" plans "$PORT" "$MIX_S" "$TMP/plans.json" 64 "$TOKEN" & ;;
        esac
        pids="$pids $!"
    done
    sleep 1 # the clients are in before the probe starts
    # the probe at nice 0: a monitor of this host (at nice 15 its own wait for a core, behind
    # the training, would be measured too)
    python3 "$TMP/mix.py" probe "$PORT" "$MIX_S" "$TMP/probe.json"
    for p in $pids; do wait "$p" || true; done
    rm -f "$TMP/mem.on"
    wait "$MEM" || true
    hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$SERVER/status")
    python3 - "$name" "$TMP" "$(cat "$TMP/mem.on.max")" "$hwm" "$@" <<'PY'
import json, sys
name, tmp, rss, hwm, kinds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
p = json.load(open(tmp + "/probe.json"))
line = "%-8s health: %d probes, p50 %s ms, p99 %s ms, slowest %s ms, unanswered %d; service RSS max %.0f MB (VmHWM %.0f MB)" % (
    name, p["probes"], p["p50_ms"], p["p99_ms"], p["max_ms"], p["failed"], rss / 1024, hwm / 1024)
for k in kinds:
    line += "\n         %s: %s" % (k, json.dumps(json.load(open("%s/%s.json" % (tmp, k)))))
print(line)
PY
}
if [ "${SCV_BENCH_ONLY:-}" = mix ]; then :; else echo; fi
echo "# client mixes (issue 38): $MIX_S s each, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
# a training run for the streams, through every mix: an unreachable target, stopped after them
LIVEJOB='{"model":"mlp","hidden":"256,256","dataset":"synthetic:8000","lr":0.0005,"target-accuracy":0.999,"max-epochs":20000,"workers":"1,2","batch":"32,128"}'
LSUB=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" --data "$LIVEJOB" "$URL/api/runs" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
LIVE=""
while [ -z "$LIVE" ]; do
    sleep 0.5
    LIVE=$(curl -s "$URL/api/submissions/$LSUB" | sed -n 's/.*"run":\([0-9][0-9]*\).*/\1/p')
done
sleep 5 # its warm-up and search
mix idle
mix slow slow
mix streams streams
mix plans plans
mix all slow streams plans
DOC=$(curl -s "$URL/api/runs/$LIVE" | wc -c)
LSTATUS=$(curl -s "$URL/api/runs/$LIVE" | sed -n 's/^{"run":{[^}]*"status":"\([^"]*\)".*/\1/p')
curl -s -X POST -H "Authorization: Bearer $TOKEN" "$URL/api/runs/$LIVE/stop" >/dev/null
echo "the training run's document at the end: $DOC bytes (run $LIVE, $LSTATUS through the mixes)"
while curl -s "$URL/api/submissions" | grep -q '"state":"running"'; do sleep 0.5; done
curl -s "$URL/api/health" | grep -q '"ok":true' && echo "service up after the load"
