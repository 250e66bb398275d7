#!/bin/sh
# check-guards.sh - every header of the tree (src/, include/, tests/) has an include guard
# of its own: its first directive is `#ifndef GUARD`, its second `#define GUARD`, its last
# `#endif`, and no other header uses GUARD. Two headers sharing a guard hide whichever is
# included second (src/model/model.h and src/train/net_internal.h shared
# SCV_NET_INTERNAL_H until issue 36): a file including both lost the second's declarations.
# Usage: sh scripts/check-guards.sh [ROOT]          ROOT default .
# Prints each violation ("not ok - FILE: ..."), "ok" when none and "N headers, N failed"
# last; exits non-zero on any violation. tests/hygiene.sh tests it; `make check` runs it.
set -u
ROOT=${1:-.}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
find "$ROOT/src" "$ROOT/include" "$ROOT/tests" -name '*.h' -type f 2>/dev/null | LC_ALL=C sort > "$tmp/headers"
: > "$tmp/guards"
: > "$tmp/bad"
while read -r f; do
    rel=${f#"$ROOT"/}
    # the directives: "#ifndef X", "#define X", ... (spaces after # allowed)
    sed -n 's/^[[:space:]]*#[[:space:]]*\([a-z]*\)[[:space:]]*\([A-Za-z0-9_]*\).*/\1 \2/p' "$f" > "$tmp/dirs"
    first=$(sed -n 1p "$tmp/dirs") second=$(sed -n 2p "$tmp/dirs") last=$(sed -n '$p' "$tmp/dirs")
    guard=${first#ifndef }
    if [ "${first%% *}" != ifndef ] || [ -z "$guard" ] || [ "$second" != "define $guard" ] || \
       [ "${last%% *}" != endif ]; then
        echo "$rel: no include guard (its first directives must be #ifndef GUARD, #define GUARD; its last #endif)" \
            >> "$tmp/bad"
        continue
    fi
    echo "$guard $rel" >> "$tmp/guards"
done < "$tmp/headers"
# a guard used by two headers: name both
awk '{ if ($1 in first) print $2 ": include guard " $1 " is also " first[$1] "'"'"'s"; else first[$1] = $2 }' \
    "$tmp/guards" >> "$tmp/bad"
n=$(wc -l < "$tmp/headers")
fail=$(wc -l < "$tmp/bad")
if [ "$fail" -gt 0 ]; then sed 's/^/not ok - /' "$tmp/bad"; else echo "ok - each of the $n headers has a guard of its own"; fi
echo "$n headers, $fail failed"
[ "$fail" -eq 0 ]
