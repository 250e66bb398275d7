#!/bin/sh
# Runs every libFuzzer harness of build/fuzz (made by `make fuzz-build`) for FUZZ_SECONDS
# (default 60) on its seed corpus tests/fuzz/corpus/NAME (new inputs go to
# build/fuzz/corpus/NAME), with ASan+UBSan and capped allocations, so a small input cannot
# ask for gigabytes. One line per harness, then "N passed, N failed"; exits non-zero on any
# finding (the reproducer is kept as build/fuzz/artifacts/NAME-*). Run from the repository
# root; `make check` runs it as build/fuzz/tests/test_fuzz through tests/run.sh.
set -u
secs=${FUZZ_SECONDS:-60}
dir=build/fuzz
passed=0 failed=0 num=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$dir/artifacts"
for bin in "$dir"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=${bin##*/fuzz_}
    num=$((num + 1))
    mkdir -p "$dir/corpus/$name"
    log="$dir/$name.log.$$" # private: another checkout's run may share build/fuzz
    "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name-" \
        "$dir/corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    mv -f "$log" "$dir/$name.log" 2>/dev/null && log="$dir/$name.log"
    if [ "$rc" -eq 0 ]; then
        echo "ok $num - fuzz $name: ${execs:-?} execs in ${secs} s, no finding"
        passed=$((passed + 1))
    else
        echo "not ok $num - fuzz $name: finding after ${execs:-?} execs (exit $rc), log $log:"
        grep -E 'ERROR|runtime error|SUMMARY|Test unit written|==[0-9]+==' "$log" | head -n 20 | sed 's/^/#   /'
        failed=$((failed + 1))
    fi
done
[ "$num" -gt 0 ] || { echo "not ok 1 - no fuzz harness in $dir (make fuzz-build)"; failed=1; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
