#!/bin/sh
# Runs every libFuzzer harness of build/fuzz (made by `make fuzz-build`) for FUZZ_SECONDS
# (default 60) on its seed corpus tests/fuzz/corpus/NAME (new inputs go to
# build/fuzz/corpus/NAME), with ASan+UBSan and capped allocations (-malloc_limit_mb,
# -rss_limit_mb), so a small input cannot ask for gigabytes. FUZZ_JOBS harnesses run at a
# time (default 2). One line per harness, then "N passed, N failed"; exits non-zero on any
# finding (the reproducer is kept as build/fuzz/artifacts/NAME-*; replay it with
# build/fuzz/fuzz_NAME FILE). Run from the repository root; `make check` runs it as
# build/fuzz/tests/test_fuzz through tests/run.sh.
# The harnesses of small parsers (SHORT below: one line, one option spec, one request,
# one hostfile, one segment message; their inputs are short and each run is cheap) run for
# FUZZ_SHORT_SECONDS (default a quarter of FUZZ_SECONDS, at least 2), after the others,
# so that they add about 10 s to `make check`.
set -u
secs=${FUZZ_SECONDS:-60}
quarter=$((secs / 4))
[ "$quarter" -ge 2 ] || quarter=2
short_secs=${FUZZ_SHORT_SECONDS:-$quarter}
SHORT=" metrics segwire hostfile intset request "
jobs=${FUZZ_JOBS:-2}
dir=build/fuzz
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$dir/artifacts"
names="" shorts=""
for bin in "$dir"/fuzz_*; do
    [ -x "$bin" ] || continue
    n=${bin##*/fuzz_}
    case "$SHORT" in
    *" $n "*) shorts="$shorts $n" ;;
    *) names="$names $n" ;;
    esac
done
names="$names$shorts" # the long ones first: pairs of equal length
if [ -z "$names" ]; then
    echo "not ok 1 - no fuzz harness in $dir (make fuzz-build)"
    echo "0 passed, 1 failed"
    exit 1
fi
# logs and exit codes are private to this run: another checkout's run may share build/fuzz
tag=$$
seconds_of() {
    case "$SHORT" in
    *" $1 "*) echo "$short_secs" ;;
    *) echo "$secs" ;;
    esac
}
fuzz_one() {
    mkdir -p "$dir/corpus/$1"
    "$dir/fuzz_$1" -max_total_time="$(seconds_of "$1")" -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$1-" \
        "$dir/corpus/$1" "tests/fuzz/corpus/$1" >"$dir/$1.log.$tag" 2>&1
    echo $? >"$dir/$1.rc.$tag"
}
running=0
for name in $names; do
    fuzz_one "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait; running=0; fi
done
wait
passed=0 failed=0 num=0
for name in $names; do
    num=$((num + 1))
    log="$dir/$name.log"
    mv -f "$dir/$name.log.$tag" "$log"
    rc=$(cat "$dir/$name.rc.$tag" 2>/dev/null || echo 1)
    rm -f "$dir/$name.rc.$tag"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        echo "ok $num - fuzz $name: ${execs:-?} execs in $(seconds_of "$name") s, no finding"
        passed=$((passed + 1))
    else
        echo "not ok $num - fuzz $name: finding after ${execs:-?} execs (exit $rc), log $log:"
        grep -a -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -n 20 | sed 's/^/#   /'
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
