#!/bin/sh
# Runs every test binary of each build directory given (default: build), e.g.
#   sh tests/run.sh build build/asan
# and prints the grand total as the last line: "N passed, N failed". Exits non-zero when any
# test failed, a binary crashed or printed no summary, or a binary exited non-zero. The CLI
# tests run that build's own scavenger binary.
# SCV_TEST_JOBS binaries run at a time (default 4: most tests wait on sleeps, timeouts and
# process start-up, not on the 2 cores), the longest first (EXPECT below), each one's output
# in a file of its own, printed whole with its seconds when it ends. The binaries of
# EXCLUSIVE run alone, after the others: they assert time bounds or CPU shares that another
# binary's load would break. SCV_TEST_JOBS=1 runs one at a time, in the same order.
set -u
# --one LOG DIR BIN (the runner of one binary, started by xargs below): the output in LOG.out,
# the exit code in LOG.rc, then the output printed whole under the lock LOG's directory holds
if [ "${1:-}" = --one ]; then
    log=$2 dir=$3 t=$4
    export SCV_BIN="$dir/scavenger"
    t0=$(date +%s)
    ("$t") >"$log.out" 2>&1 </dev/null # (a subshell: its word of a crash goes to the log too)
    echo $? >"$log.rc"
    echo $(($(date +%s) - t0)) >"$log.s"
    # the CPU seconds of the binary and what it waited for (the second line of `times`)
    times >"$log.times" # (in this shell: a subshell's would count none)
    cpu=$(awk 'NR == 2 { split($1 "" $2, a, /[ms]/); printf "%.0f", a[1] * 60 + a[2] + a[3] * 60 + a[4] }' "$log.times")
    {
        flock 9
        echo "# $t"
        cat "$log.out"
        echo "# $t: $(cat "$log.s") s (CPU $cpu s, from +$((t0 - SCV_RUN_START)) s)"
    } 9>"${log%/*}/lock"
    exit 0
fi
[ $# -gt 0 ] || set -- build
jobs=${SCV_TEST_JOBS:-4}
case "$jobs" in '' | *[!0-9]* | 0) echo "tests/run.sh: SCV_TEST_JOBS='$jobs': give a number of 1 or more" >&2; exit 2 ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI and OpenBLAS keep process-lifetime allocations that LeakSanitizer reports at exit;
# leak checking stays on for everything else through the suppression file.
export LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# seconds each slow binary took (one at a time, 2 cores; BUILD:NAME, BUILD the last part of
# the build directory), to start the longest first; the others count 0 and keep their order
EXPECT="asan:test_cli_run:90 build:test_faults:88 build:test_pytorch_run:70 build:test_cli_run:60
        build:test_pytorch:45 asan:test_cli:45 build:test_cli:40 fuzz:test_fuzz:37
        asan:test_elastic:34 build:test_elastic:32 build:test_cluster:28 build:test_watchdog:27
        asan:test_watchdog:27 asan:test_robust:25 build:test_robust:21 asan:test_service:12
        asan:test_service_restart:12 build:test_service:9 build:test_service_restart:10
        build:test_service_load:11 asan:test_service_load:11
        build:test_browser:9 build:test_layers:8 build:test_store:8 asan:test_stream:8
        build:test_stream:7"
# run alone, after the pool (BUILD:NAME): test_cluster measures the emulated VMs' CPU shares
# and bandwidth, and its dynamic batching's shares follow measured speeds (under the pool's
# load its worker 0 was held at the floor from another iteration than the one it checks)
EXCLUSIVE="build:test_cluster"

start=$(date +%s)
export SCV_RUN_START="$start"
LOGS=$(mktemp -d /tmp/scv-run.XXXXXX) || exit 1
trap 'rm -rf "$LOGS"' EXIT
trap 'exit 1' INT TERM HUP
i=0
for dir in "$@"; do
    for t in "$dir"/tests/test_*; do
        [ -x "$t" ] || continue
        i=$((i + 1))
        key=${dir##*/}:${t##*/}
        secs=0
        for e in $EXPECT; do
            case "$e" in "$key":*) secs=${e##*:} ;; esac
        done
        pool=pool
        for e in $EXCLUSIVE; do
            [ "$e" = "$key" ] && pool=alone
        done
        # one line per binary: where it runs, its expected seconds, its number, its build, itself
        echo "$pool $secs $i $dir $t"
    done
done >"$LOGS/list"
# the pool, longest first, then the exclusive ones one by one (the number orders the logs)
for pool in pool alone; do
    n=$jobs
    [ $pool = alone ] && n=1
    grep "^$pool " "$LOGS/list" | sort -k2,2nr -k3,3n | while read -r _ _ num dir t; do
        echo "$LOGS/$num $dir $t"
    done | xargs -r -L 1 -P "$n" sh "$0" --one
done

passed=0 failed=0 bad=0
while read -r _ _ num dir t; do
    echo "$(cat "$LOGS/$num.s" 2>/dev/null || echo 0) $t" >>"$LOGS/seconds"
    rc=$(cat "$LOGS/$num.rc" 2>/dev/null || echo none)
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$LOGS/$num.out" 2>/dev/null | tail -n 1)
    if [ -z "$last" ]; then
        echo "not ok - $t crashed or printed no summary (exit $rc)"
        failed=$((failed + 1)); bad=1; continue
    fi
    p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
    passed=$((passed + p)); failed=$((failed + f))
    [ "$f" -eq 0 ] || echo "not ok - $t: $f of $((p + f)) failed (its output above)"
    if [ "$rc" != 0 ]; then
        bad=1
        [ "$f" -gt 0 ] || echo "not ok - $t exited $rc after \"$last\""
    fi
done <"$LOGS/list"
echo "# $i binaries in $(($(date +%s) - start)) s, $jobs at a time; the slowest:" \
    "$(sort -k1,1nr "$LOGS/seconds" | head -n 8 | awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1 }')"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$bad" -eq 0 ]
