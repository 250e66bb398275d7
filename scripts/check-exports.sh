#!/bin/sh
# check-exports.sh - the public contract against the shared library: every function
# include/scv.h declares is marked SCV_API, and libscv.so exports exactly those (nothing
# exported that the header does not declare, nothing declared that is not exported); and
# SCV_VERSION is "SCV_VERSION_MAJOR.MINOR.PATCH". Run from the repository root, after a
# release build:
#   sh scripts/check-exports.sh [build/libscv.so] [include/scv.h]
# Prints one "ok"/"not ok" line per check and "N passed, N failed" last (tests/run.sh
# counts it as build/tests/test_exports); exits non-zero when a check failed.
set -u
LIB=${1:-build/libscv.so}
HDR=${2:-include/scv.h}
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# the declared contract: the name before the first "(" of each SCV_API line
sed -n 's/^SCV_API[^(]*[ *]\(scv_[A-Za-z0-9_]*\) *(.*/\1/p' "$HDR" | sort -u > "$tmp/declared"
# every function the header declares, as the compiler reads it (gcc's -aux-info), must be
# among them: a declaration without SCV_API would be public in the header, hidden in the .so
if command -v gcc >/dev/null 2>&1; then
    printf '#include "scv.h"\n' > "$tmp/h.c"
    gcc -std=c11 -fsyntax-only -I"$(dirname "$HDR")" -aux-info "$tmp/aux" "$tmp/h.c" 2>"$tmp/gccerr"
    grep "$(basename "$HDR")" "$tmp/aux" | sed -n 's/.*[ *]\(scv_[A-Za-z0-9_]*\) *(.*/\1/p' | sort -u > "$tmp/all"
    if [ -s "$tmp/all" ]; then
        missing=$(comm -23 "$tmp/all" "$tmp/declared" | tr '\n' ' ')
        [ -z "$missing" ] && ok "every function of $HDR is marked SCV_API ($(wc -l < "$tmp/all"))" \
            || bad "declared in $HDR without SCV_API: $missing"
    else
        bad "gcc -aux-info read no declaration from $HDR: $(head -c 300 "$tmp/gccerr")"
    fi
fi

if [ ! -f "$LIB" ]; then
    bad "$LIB: not built (make $LIB)"
else
    nm -D --defined-only "$LIB" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' \
        | grep -v -E '^_(init|fini)$' | sort -u > "$tmp/exported"
    extra=$(comm -23 "$tmp/exported" "$tmp/declared" | tr '\n' ' ')
    [ -z "$extra" ] && ok "$LIB exports nothing $HDR does not declare ($(wc -l < "$tmp/exported") symbols)" \
        || bad "$LIB exports what $HDR does not declare: $extra"
    absent=$(comm -13 "$tmp/exported" "$tmp/declared" | tr '\n' ' ')
    [ -z "$absent" ] && ok "$LIB exports every function $HDR declares ($(wc -l < "$tmp/declared"))" \
        || bad "declared SCV_API in $HDR but not exported by $LIB: $absent"
fi

# the version macros agree with the string the Makefile reads (the soname's major)
v=$(sed -n 's/^#define SCV_VERSION "\(.*\)"$/\1/p' "$HDR")
mj=$(sed -n 's/^#define SCV_VERSION_MAJOR \([0-9]*\)$/\1/p' "$HDR")
mi=$(sed -n 's/^#define SCV_VERSION_MINOR \([0-9]*\)$/\1/p' "$HDR")
pa=$(sed -n 's/^#define SCV_VERSION_PATCH \([0-9]*\)$/\1/p' "$HDR")
[ -n "$v" ] && [ "$v" = "$mj.$mi.$pa" ] && ok "SCV_VERSION \"$v\" is SCV_VERSION_MAJOR.MINOR.PATCH" \
    || bad "SCV_VERSION \"$v\" is not SCV_VERSION_MAJOR.MINOR.PATCH ($mj.$mi.$pa)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
