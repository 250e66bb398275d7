#!/bin/sh
# check-format.sh - the C lines a change touched keep to .clang-format (4 spaces, 120
# columns, the project's braces): clang-format-diff over `git diff -M -U0 BASE` of src/,
# include/ and tests/ formats only the lines that differ from BASE (a moved file only its
# changed lines), so an untouched line keeps its hand layout and no reformatting of the
# whole tree is asked for.
#   BASE  $SCV_FORMAT_BASE when set; else the merge base of HEAD with origin/main (or main)
#         when HEAD is not on it; else HEAD~1 (HEAD is main's own: its last commit, as CI
#         on main sees it); with no such commit (a one-commit or shallow clone) the check
#         is skipped, saying so.
# Uncommitted changes to tracked files count too (the working tree is compared with BASE).
# Usage: sh scripts/check-format.sh [DIR]     DIR: a directory of the checkout (default .)
# Prints "ok - ..." or "not ok - FILE: ..." with the diff that would fix it (apply it with
# `git diff -M -U0 BASE | clang-format-diff -p1 -i`); exits non-zero when a changed line is
# not formatted. tests/hygiene.sh tests it; `make check` runs it.
set -u
cd "${1:-.}" || exit 1
if ! top=$(git rev-parse --show-toplevel 2>/dev/null); then
    echo "ok - format: skipped: not a git checkout (no change to check)"
    exit 0
fi
cd "$top" || exit 1
if ! command -v clang-format >/dev/null || ! command -v clang-format-diff >/dev/null; then
    echo "not ok - format: clang-format (and its clang-format-diff) is not installed: scripts/install-deps.sh installs it"
    exit 1
fi
[ -f .clang-format ] || { echo "not ok - format: $top/.clang-format: missing"; exit 1; }
base=${SCV_FORMAT_BASE:-} what="SCV_FORMAT_BASE"
if [ -z "$base" ]; then
    head=$(git rev-parse -q --verify HEAD 2>/dev/null) || {
        echo "ok - format: skipped: no commit yet"
        exit 0
    }
    for ref in origin/main main; do
        git rev-parse -q --verify "$ref^{commit}" >/dev/null 2>&1 || continue
        mb=$(git merge-base HEAD "$ref" 2>/dev/null) || continue
        if [ "$mb" != "$head" ]; then base=$mb what="the merge base with $ref"; fi
        break
    done
    if [ -z "$base" ]; then
        if git rev-parse -q --verify "HEAD~1^{commit}" >/dev/null 2>&1; then
            base=HEAD~1 what="HEAD~1 (HEAD is main's: its last commit)"
        else
            echo "ok - format: skipped: no base to compare with (one commit, or a shallow clone; SCV_FORMAT_BASE=REV names one)"
            exit 0
        fi
    fi
fi
git rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1 || { echo "not ok - format: base '$base': no such commit"; exit 1; }
if ! d=$(git diff -M -U0 --no-color "$base" -- src include tests 2>&1); then
    echo "not ok - format: git diff $base failed: $d"
    exit 1
fi
if ! out=$(printf '%s\n' "$d" | clang-format-diff -p1 -regex '.*\.[ch]' 2>&1); then
    echo "not ok - format: clang-format-diff failed: $out"
    exit 1
fi
if [ -z "$out" ]; then
    echo "ok - format: the C lines changed since $what keep to .clang-format"
    exit 0
fi
printf '%s\n' "$out" | sed -n 's|^+++ \([^\t]*\).*|not ok - \1: changed lines not formatted as .clang-format says|p'
printf '%s\n' "$out"
echo "format: fix with: git diff -M -U0 $base | clang-format-diff -p1 -i   (changes since $what)"
exit 1
