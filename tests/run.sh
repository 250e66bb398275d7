#!/bin/sh
# Runs every test binary of each build directory given (default: build), e.g.
#   sh tests/run.sh build build/asan
# and prints the grand total as the last line: "N passed, N failed". Exits non-zero when any
# test failed or a binary crashed. The CLI tests run that build's own scavenger binary.
set -u
[ $# -gt 0 ] || set -- build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI and OpenBLAS keep process-lifetime allocations that LeakSanitizer reports at exit;
# leak checking stays on for everything else through the suppression file.
export LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
passed=0 failed=0 bad=0
for dir in "$@"; do
export SCV_BIN="$dir/scavenger"
for t in "$dir"/tests/test_*; do
    [ -x "$t" ] || continue
    echo "# $t"
    t0=$(date +%s)
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    echo "# $t: $(($(date +%s) - t0)) s"
    last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$last" ]; then
        echo "not ok - $t crashed or printed no summary (exit $rc)"
        failed=$((failed + 1)); bad=1; continue
    fi
    p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -eq 0 ] || bad=1
done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$bad" -eq 0 ]
