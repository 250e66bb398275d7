#!/bin/sh
# hygiene.sh - the test of the tree's hygiene checks, which `make check` runs before the
# tests: scripts/check-guards.sh (every header's include guard is its own) and
# scripts/check-format.sh (the C lines a change touched keep to .clang-format). Each must
# pass on this tree and fail, naming the file, on an injected fault: a header given another
# header's guard, a header without one, a badly formatted line changed on a branch or in
# main's last commit. And the format check's bases: a one-commit clone is skipped saying
# so, a line nobody changed is left alone, a moved file is checked on its changed lines
# only. Also the defect the guard check was written for: src/model/model.h and
# src/train/net_internal.h compile together (they shared a guard, hiding the second).
# Run from the repository root (tests/run.sh counts it as build/tests/test_hygiene).
set -u
TOP=$(pwd)
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# expect CMD_OUTPUT_FILE RC WANT_RC PATTERN NAME: the exit status and a line matching PATTERN
expect() {
    if [ "$2" -ne "$3" ]; then
        bad "$5: exit $2, expected $3: $(head -5 "$1" | tr '\n' ' ')"
    elif ! grep -q -- "$4" "$1"; then
        bad "$5: no line matching '$4': $(head -5 "$1" | tr '\n' ' ')"
    else
        ok "$5: $(grep -- "$4" "$1" | head -1)"
    fi
}

# ---- include guards ----
sh "$TOP/scripts/check-guards.sh" "$TOP" > "$tmp/out" 2>&1
expect "$tmp/out" $? 0 '^ok - each of the [0-9]* headers has a guard of its own' "the tree's headers"
# a copy of the headers: one given util.h's guard, one without any
mkdir -p "$tmp/g"
(cd "$TOP" && find src include tests -name '*.h' -type f | while read -r h; do
    mkdir -p "$tmp/g/$(dirname "$h")" && cp "$h" "$tmp/g/$h"
done)
sed -i 's/SCV_TRAIN_NET_INTERNAL_H/SCV_UTIL_H/' "$tmp/g/src/train/net_internal.h"
sh "$TOP/scripts/check-guards.sh" "$tmp/g" > "$tmp/out" 2>&1
expect "$tmp/out" $? 1 '^not ok - src/train/net_internal.h: include guard SCV_UTIL_H is also src/core/util.h' \
    "a header given util.h's guard"
printf '/* no guard */\nint scv_unguarded(void);\n' > "$tmp/g/src/core/unguarded.h"
sed -i 's/SCV_UTIL_H/SCV_TRAIN_NET_INTERNAL_H/' "$tmp/g/src/train/net_internal.h"
sh "$TOP/scripts/check-guards.sh" "$tmp/g" > "$tmp/out" 2>&1
expect "$tmp/out" $? 1 '^not ok - src/core/unguarded.h: no include guard' "a header without a guard"
# the defect: a file including both headers that shared a guard lost the second's declarations
printf '#include "model/model.h"\n#include "train/net_internal.h"\nint f(const scv_net *m) { return scv_net_layer_count(m); }\n' \
    > "$tmp/both.c"
if cc -std=c11 -Wall -Werror -fsyntax-only -I"$TOP/include" -I"$TOP/src" "$tmp/both.c" > "$tmp/out" 2>&1; then
    ok "model/model.h and train/net_internal.h compile together"
else
    bad "model/model.h and train/net_internal.h together: $(head -3 "$tmp/out" | tr '\n' ' ')"
fi

# ---- format: a scratch repository with the tree's .clang-format ----
R=$tmp/repo
git_() { git -C "$R" -c user.name=t -c user.email=t@t -c init.defaultBranch=main "$@" > /dev/null 2>&1; }
mkdir -p "$R/src" && cp "$TOP/.clang-format" "$R/"
printf '/* a.c */\nint f(int x) { return x + 1; }\n' > "$R/src/a.c"
printf '/* old.c: a line nobody changes */\nint  old( int x ){return x;}\nint kept(void) { return 0; }\n' > "$R/src/old.c"
git_ init -q && git_ add -A && git_ commit -q -m one
fmt() { SCV_FORMAT_BASE='' sh "$TOP/scripts/check-format.sh" "$R" > "$tmp/out" 2>&1; }
fmt
expect "$tmp/out" $? 0 '^ok - format: skipped: no base to compare with' "a one-commit clone: skipped, saying so"
# a branch: a badly formatted line fails naming its file; formatted, it passes
git_ checkout -q -b work
printf 'int g( int x ){return x*2;}\n' >> "$R/src/a.c"
git_ commit -q -am bad
fmt
expect "$tmp/out" $? 1 '^not ok - src/a.c: changed lines not formatted' "a badly formatted line on a branch"
printf '/* a.c */\nint f(int x) { return x + 1; }\nint g(int x) { return x * 2; }\n' > "$R/src/a.c"
fmt
expect "$tmp/out" $? 0 '^ok - format: the C lines changed since the merge base with main' \
    "the same line formatted (uncommitted), old.c's untouched line left alone"
# a moved file: only its changed lines (old.c's bad line moves with it)
git_ commit -q -am good && git_ mv src/old.c src/moved.c
sed -i 's/^int kept(void) { return 0; }$/int kept(void) { return 1; }/' "$R/src/moved.c"
git_ commit -q -am moved
fmt
expect "$tmp/out" $? 0 '^ok - format:' "a moved file: its unchanged bad line left alone"
# main's own last commit (CI on main): a bad line in it fails
git_ checkout -q main
printf 'int h( void ){return 3;}\n' >> "$R/src/a.c"
git_ commit -q -am main-bad
fmt
expect "$tmp/out" $? 1 '^not ok - src/a.c: changed lines not formatted' "main's last commit with a bad line"
SCV_FORMAT_BASE=nosuch sh "$TOP/scripts/check-format.sh" "$R" > "$tmp/out" 2>&1
expect "$tmp/out" $? 1 "^not ok - format: base 'nosuch': no such commit" "a base that is not a commit"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
