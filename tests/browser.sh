#!/bin/sh
# The dashboard in a real browser: Debian's headless chromium against `scavenger serve` (of
# $SCV_BIN, else build/scavenger) on a free loopback port with a fresh store. A tiny run is
# submitted through the API (curl) and, once it reached its target, its page must render
# the trade-off chart (points), the phase timeline (segments) and the chosen configuration;
# a screenshot is written to build/artifacts/dashboard-run.png (kept as a build artefact).
# Then a longer run is submitted and its page opened while it trains: the page must apply
# live updates (server-sent events: the document, then deltas) before the run ends, and draw the trade-off chart from
# the latest plan the loop stored while no report existed yet (the live curve: the page
# records how many points it drew so in data-live-points). Without chromium or curl every
# check fails (scripts/install-deps.sh installs them).
# The dashboard's pure pieces are tested first on tests/web_unit.html (a file page, no
# service): axis ticks, the timeline's labels, the runs table's width, the predicted-actual
# figure of a missed target, the submit form's job, the plan form's request (deadline,
# budget, pricing), the comparison, a running run's forecast (eta_text), a run's stored reason
# (status_reason), a live delta applied (apply_delta) (web_unit_NAME). Then
# the logs view and the comparison of the two runs are opened, and a screenshot of every
# page (runs, run, logs, report, compare, submit, plan) is written to $ART/dashboard-*.png
# at 1400 px (two chromiums at a time: the suite's time is tight).
# Prints "ok - NAME" / "not ok - NAME" per check and "N passed, N failed" last.
set -u
BIN=${SCV_BIN:-build/scavenger}
ART=${SCV_ARTIFACTS:-build/artifacts}
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
units="axis_ticks chart_labels place_labels timeline_labels runs_table predicted_actual job_form plan_request compare eta_text status_reason status_badge apply_delta"
pages="runs run logs report compare submit plan"
names="run_page_renders tradeoff_chart timeline chosen_config screenshot live_updates live_curve logs_view compare_view"
for u in $units; do names="$names web_unit_$u"; done
for p in $pages; do names="$names screenshot_$p"; done
if ! command -v chromium >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
    # scripts/install-deps.sh installs both: their absence is a failure, not a skip
    for n in $names; do bad "$n (chromium or curl not installed: scripts/install-deps.sh)"; done
    finish
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TMP=$(mktemp -d /tmp/scv-test-browser-XXXXXX)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
"$BIN" serve --listen 127.0.0.1:0 --db "$TMP/runs.db" --port-file "$TMP/port" >"$TMP/serve.log" 2>&1 &
SERVER=$!
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$TMP/port" ] || { bad "service starts"; cat "$TMP/serve.log"; finish; }
PORT=$(cat "$TMP/port") TOKEN=$(cat "$TMP/runs.db.token")
URL="http://127.0.0.1:$PORT"
HEADLESS="chromium --headless --no-sandbox --disable-gpu --hide-scrollbars"
CHROME="$HEADLESS --user-data-dir=$TMP/chrome"
mkdir -p "$ART"
for p in $pages; do rm -f "$ART/dashboard-$p.png"; done

# the pure pieces, in this browser, on a file page: in the background while the first run trains
# (run as tests/browser.sh or as its copy build/tests/test_browser from the source tree)
UNIT_PAGE=""
for d in "$(dirname "$0")" tests "$(dirname "$0")/../../tests"; do
    [ -f "$d/web_unit.html" ] && { UNIT_PAGE="$(cd "$d" && pwd)/web_unit.html"; break; }
done
timeout 60 $HEADLESS --user-data-dir="$TMP/chrome-unit" --window-size=1400,900 --virtual-time-budget=2000 \
    --dump-dom "file://${UNIT_PAGE:-/nonexistent/tests/web_unit.html}" >"$TMP/unit.html" 2>/dev/null &
UNIT=$!
unit_results() {
    wait "$UNIT"
    for u in $units; do
        line=$(grep -E "^(<pre id=\"results\">)?(not )?ok - $u(:|\$)" "$TMP/unit.html" | sed 's/^<pre id="results">//')
        case "$line" in
        "ok - $u") ok "web_unit_$u" ;;
        *) bad "web_unit_$u${line:+ (${line#*: })}" ;;
        esac
    done
}
# a page's screenshot at 1400 px (and, with a third argument, its DOM there), niced: the
# pages are taken while a run trains
shot() { timeout 60 nice $HEADLESS --user-data-dir="$TMP/chrome-$1" --window-size=1400,1100 --virtual-time-budget=3000 \
    --screenshot="$ART/dashboard-$1.png" ${3:+--dump-dom} "$URL/$2" >"$TMP/$1.html" 2>/dev/null; }

# submits a job and prints the run's id once it exists (and, with "done", once it finished)
submit() {
    sub=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        --data "$1" "$URL/api/runs" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
    [ -n "$sub" ] || return 1
    j=0
    while [ $j -lt 1200 ]; do
        s=$(curl -s "$URL/api/submissions/$sub")
        run=$(printf '%s' "$s" | sed -n 's/.*"run":\([0-9][0-9]*\).*/\1/p')
        case "$s" in
        *'"state":"running"'* | *'"state":"queued"'*) [ -n "$run" ] && [ "$2" = started ] && { echo "$run"; return 0; } ;;
        *'"state":"done"'*) echo "$run"; return 0 ;;
        *) return 1 ;;
        esac
        sleep 0.1
        j=$((j + 1))
    done
    return 1
}

# the pages that show no run (the submit and plan forms) while the first run trains
( shot submit '#/submit'; shot plan '#/plan' ) &
FORMS=$!
RUN=$(submit '{"model":"mlp","hidden":"32","dataset":"synthetic:2000","lr":0.003,"target-accuracy":0.8,"workers":"1,2","batch":"32,64"}' done)
unit_results
wait "$FORMS"
if [ -z "$RUN" ]; then
    bad "run_page_renders (the tiny run did not finish)"
    cat "$TMP/serve.log"
    finish
fi
timeout 60 $CHROME --window-size=1400,1800 --virtual-time-budget=5000 --screenshot="$ART/dashboard-run.png" \
    --dump-dom "$URL/#/run/$RUN" >"$TMP/dom.html" 2>/dev/null
check run_page_renders "grep -q 'data-live=\"0\"' '$TMP/dom.html' && ! grep -q 'id=\"live-status\"' '$TMP/dom.html' && grep -q 'data-run-status=\"done\"' '$TMP/dom.html'"
check tradeoff_chart "grep -o '<svg id=\"tradeoff-chart\".*</svg>' '$TMP/dom.html' | head -c 200000 | grep -q 'class=\"pt\"' && grep -q 'Pareto front' '$TMP/dom.html'"
check timeline "grep -o '<svg id=\"timeline\".*' '$TMP/dom.html' | grep -q 'class=\"step\" data-phase=\"warmup\"'"
check chosen_config "grep -Eq 'id=\"chosen-config\">K=[0-9]+, B=[0-9]+ on c5.xlarge' '$TMP/dom.html'"
check screenshot "[ \$(wc -c <'$ART/dashboard-run.png' 2>/dev/null || echo 0) -gt 20000 ]"

# the live page: opened while a run of about 6 s trains; chromium's dump waits for the
# event stream to end (the run's end), and the page counts the updates it applied
RUN2=$(submit '{"model":"mlp","hidden":"256,256","dataset":"synthetic:8000","lr":0.0005,"target-accuracy":0.9,"workers":"1,2","batch":"32,128"}' started)
# meanwhile the other pages, one after another: the logs view (the run's log tailed through
# the API: its bytes on the page), the report, the runs
( shot logs "#/run/$RUN/logs" dom; shot report "#/run/$RUN/report"; shot runs '#/' ) &
SHOTS=$!
timeout 120 $CHROME --virtual-time-budget=4000 --dump-dom "$URL/#/run/$RUN2" >"$TMP/live.html" 2>/dev/null
wait "$SHOTS" # not a bare wait: the service runs in the background
lb=$(sed -n 's/.*id="log-text" data-bytes="\([0-9]*\)".*/\1/p' "$TMP/logs.html" | head -n 1)
check logs_view "[ \"\${lb:-0}\" -gt 0 ] && grep -q 'scavenger\\|target\\|epoch' '$TMP/logs.html'"
n=$(sed -n 's/.*data-updates="\([0-9]*\)".*/\1/p' "$TMP/live.html" | head -n 1)
check live_updates "[ -n \"$RUN2\" ] && [ \"\${n:-0}\" -ge 2 ]"
[ "${n:-0}" -ge 2 ] || echo "#   run $RUN2: ${n:-no} live updates applied"
# the live curve: the run's 4 configurations (K 1,2 x B 32,128) drawn before its report
lp=$(sed -n 's/.*data-live-points="\([0-9]*\)".*/\1/p' "$TMP/live.html" | head -n 1)
check live_curve "[ -n \"$RUN2\" ] && [ \"\${lp:-0}\" -ge 4 ]"
[ "${lp:-0}" -ge 4 ] || echo "#   run $RUN2: ${lp:-no} points of a live plan drawn"

# the comparison of the two runs (the second has ended: its event stream did)
shot compare "#/compare/$RUN,$RUN2" dom
check compare_view "grep -q 'id=\"compare-table\"' '$TMP/compare.html' && grep -q 'href=\"#/run/$RUN2\">run $RUN2' '$TMP/compare.html' && grep -q 'id=\"compare-chart\"' '$TMP/compare.html'"
# a screenshot of every page (each looked at by whoever changes a page)
for p in $pages; do check "screenshot_$p" "[ \$(wc -c <'$ART/dashboard-$p.png' 2>/dev/null || echo 0) -gt 10000 ]"; done
finish
