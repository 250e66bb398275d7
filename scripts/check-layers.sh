#!/bin/sh
# check-layers.sh - verifies the layers of docs/layers.txt on a tree and its objects:
#   includes  every #include "..." of src/PART/*.[ch] resolves to the file's own part,
#             include/ (the public header) or a part PART may use;
#   symbols   every undefined symbol of an object build/src/PART/*.o that another part's
#             object defines belongs to a part PART may use (nm);
#   only      <HEADER> is included by its one file of src/ and no other;
#   libc      a libc part includes C standard headers only;
#   data      each part uses only parts listed before it (lowest first: no cycle);
#   drawing   docs/ARCHITECTURE.md draws the parts in the file's order (top down, the
#             column-0 "PART/" lines of its first drawing) and its table of the parts each
#             may use and never uses (between the "layers.txt table" markers) is the one
#             --table prints from the file: the drawing and the data cannot drift apart.
# Usage (from the repository root, after a build):
#   sh scripts/check-layers.sh [ROOT [OBJDIR]]      ROOT default ., OBJDIR default ROOT/build
#   sh scripts/check-layers.sh --table [ROOT]       prints the table ARCHITECTURE.md holds
# Prints each violation ("not ok - ..."), one "ok" line per rule that holds and
# "N passed, N failed" last; exits non-zero on any violation. tests/layers.sh tests it.
set -u
TABLE=0
[ "${1:-}" = --table ] && { TABLE=1; shift; }
ROOT=${1:-.}
OBJ=${2:-$ROOT/build}
CONF=$ROOT/docs/layers.txt
DOC=$ROOT/docs/ARCHITECTURE.md
[ -f "$CONF" ] || { echo "not ok - $CONF: missing"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
report() { # $1 rule name, $2 file of violations
    if [ -s "$2" ]; then
        sed 's/^/not ok - /' "$2"
        fail=$((fail + $(wc -l < "$2")))
    else
        echo "ok - $1"
        pass=$((pass + 1))
    fi
}

# parts: "PART USED..." lines; the allowed pairs "PART USED" (a part may use itself)
awk '$1 == "part" { print $2; for (i = 3; i <= NF; i++) print $2, $i > "/dev/stderr" }' \
    "$CONF" > "$tmp/parts" 2> "$tmp/allowed"
while read -r p; do echo "$p $p"; done < "$tmp/parts" >> "$tmp/allowed"

# the table of the parts, top down: a part, the parts it may use, the parts below it (listed
# before it) it never uses
layer_table() {
    echo "| part | may use | never uses (of the parts below it) |"
    echo "|---|---|---|"
    awk '$1 == "part" { n++; name[n] = $2; uses[n] = ""; for (i = 3; i <= NF; i++) uses[n] = uses[n] " " $i " " }
         END {
             for (k = n; k >= 1; k--) {
                 may = ""; never = ""
                 for (j = k - 1; j >= 1; j--)
                     if (index(uses[k], " " name[j] " ")) may = may (may == "" ? "" : ", ") name[j] "/"
                     else never = never (never == "" ? "" : ", ") name[j] "/"
                 printf "| %s/ | %s | %s |\n", name[k], may == "" ? "-" : may, never == "" ? "-" : never
             }
         }' "$CONF"
}
if [ "$TABLE" = 1 ]; then layer_table; exit 0; fi

# ---- the data itself: lowest first, each part uses parts listed before it ----
awk '$1 == "part" {
         for (i = 3; i <= NF; i++)
             if (!($i in seen)) print "docs/layers.txt:" NR ": " $2 " uses " $i ", not a part listed before it"
         seen[$2] = 1
     }' "$CONF" > "$tmp/data_bad"
report "data: each part of docs/layers.txt uses only parts listed before it" "$tmp/data_bad"

# ---- the drawing: docs/ARCHITECTURE.md's parts and table are the file's ----
: > "$tmp/draw_bad"
if [ ! -f "$DOC" ]; then
    echo "docs/ARCHITECTURE.md: missing (it draws the layers)" > "$tmp/draw_bad"
else
    # the first fenced block: its column-0 "PART/" lines, top down; the file's parts, top down
    awk '/^```/ { if (inblock) exit; inblock = 1; next }
         inblock && /^[a-z][a-z0-9_]*\/( |$)/ { sub(/\/.*/, ""); print }' "$DOC" > "$tmp/drawn"
    awk '$1 == "part" { print $2 }' "$CONF" | awk '{ l[NR] = $0 } END { for (i = NR; i >= 1; i--) print l[i] }' \
        > "$tmp/order"
    if ! cmp -s "$tmp/drawn" "$tmp/order"; then
        echo "docs/ARCHITECTURE.md: its drawing's parts, top down, are $(tr '\n' ' ' < "$tmp/drawn")but docs/layers.txt's are $(tr '\n' ' ' < "$tmp/order")" >> "$tmp/draw_bad"
    fi
    layer_table > "$tmp/table"
    awk '/<!-- layers.txt table: end/ { on = 0 } on { print } /<!-- layers.txt table: begin/ { on = 1 }' "$DOC" \
        > "$tmp/doc_table"
    if ! cmp -s "$tmp/doc_table" "$tmp/table"; then
        diff "$tmp/doc_table" "$tmp/table" | grep '^[<>]' | head -4 | sed 's/^</doc:/; s/^>/layers.txt:/' | \
            sed 's/^/docs\/ARCHITECTURE.md: its layer table differs from docs\/layers.txt (sh scripts\/check-layers.sh --table): /' \
            >> "$tmp/draw_bad"
        [ -s "$tmp/doc_table" ] || echo "docs/ARCHITECTURE.md: no layer table between the 'layers.txt table' markers" >> "$tmp/draw_bad"
    fi
fi
report "drawing: docs/ARCHITECTURE.md draws docs/layers.txt's parts and rules" "$tmp/draw_bad"

# ---- includes ----
: > "$tmp/inc_bad"
for dir in "$ROOT"/src/*/; do
    part=$(basename "$dir")
    grep -qx "$part" "$tmp/parts" || echo "src/$part/: a part docs/layers.txt does not name" >> "$tmp/inc_bad"
done
# one awk over every file: an include resolves against the file's directory, then src/,
# then include/ (the public header: always allowed); its part is the directory under src/
ls "$ROOT"/src/*/*.c "$ROOT"/src/*/*.h 2>/dev/null | awk -v root="$ROOT" -v allowed="$tmp/allowed" '
    function norm(p,   n, a, i, out, k, st) {
        n = split(p, a, "/"); k = 0
        for (i = 1; i <= n; i++) {
            if (a[i] == "" || a[i] == ".") continue
            if (a[i] == ".." && k > 0 && st[k] != "..") { k--; continue }
            st[++k] = a[i]
        }
        out = ""
        for (i = 1; i <= k; i++) out = out (i > 1 ? "/" : "") st[i]
        return out
    }
    function exists(p,   r, x) { r = (getline x < p); if (r >= 0) close(p); return r >= 0 }
    BEGIN { while ((getline l < allowed) > 0) ok[l] = 1 }
    {
        f = $0; rel = f; sub("^" root "/", "", rel); rel = norm(rel)
        split(rel, parts, "/"); part = parts[2]
        dir = f; sub("/[^/]*$", "", dir)
        ln = 0
        while ((getline line < f) > 0) {
            ln++
            if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
            inc = line; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
            if (exists(dir "/" inc)) t = dir "/" inc
            else if (exists(root "/src/" inc)) t = root "/src/" inc
            else if (exists(root "/include/" inc)) continue
            else { print rel ":" ln " includes \"" inc "\": no such file under src/ or include/"; continue }
            t = norm(t); r = norm(root)
            if (substr(t, 1, length(r) + 5) != r "/src/" && !(r == "" && substr(t, 1, 4) == "src/")) {
                print rel ":" ln " includes \"" inc "\": outside src/ and include/"; continue
            }
            q = substr(t, length(r) + (r == "" ? 1 : 2)); split(q, qa, "/"); q = qa[2]
            if (!((part " " q) in ok))
                print rel ":" ln " includes \"" inc "\": " part " may not use " q " (docs/layers.txt)"
        }
        close(f)
    }' >> "$tmp/inc_bad"
report "includes: every #include \"...\" of src/ keeps to docs/layers.txt" "$tmp/inc_bad"

# ---- one-file rules ----
: > "$tmp/only_bad"
awk '$1 == "only" { print $2, $3 }' "$CONF" | while read -r hdr file; do
    grep -l "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]$hdr[>\"]" \
        "$ROOT"/src/*/*.c "$ROOT"/src/*/*.h "$ROOT"/include/*.h 2>/dev/null | \
        while read -r f; do
            r=${f#"$ROOT"/}
            [ "$r" = "$file" ] || echo "$r includes <$hdr>: only $file may (docs/layers.txt)"
        done
done > "$tmp/only_bad"
report "only: each header of an 'only' rule is included by its one file" "$tmp/only_bad"

# ---- libc parts ----
STD=" assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h \
math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h \
stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h "
: > "$tmp/libc_bad"
for part in $(awk '$1 == "libc" { print $2 }' "$CONF"); do
    for f in "$ROOT/src/$part"/*.c "$ROOT/src/$part"/*.h; do
        [ -f "$f" ] || continue
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$f" | \
            sed 's/^\([0-9]*\):.*<\(.*\)>.*/\1 \2/' | while read -r line h; do
            case "$STD" in
                *" $h "*) ;;
                *) echo "src/$part/$(basename "$f"):$line includes <$h>: $part uses the C library only" ;;
            esac
        done
    done
done > "$tmp/libc_bad"
report "libc: the libc parts include C standard headers only" "$tmp/libc_bad"

# ---- link-level symbols ----
: > "$tmp/sym_bad"
set -- "$OBJ"/src/*/*.o
if [ ! -f "$1" ]; then
    echo "$OBJ/src/*/*.o: no object (build first)" > "$tmp/sym_bad"
else
    # the objects whose source is there (one whose source is gone, a file moved to another
    # part, is a stale build's); one nm over all of them (nm -A names each line's object)
    : > "$tmp/objs"
    for o in "$@"; do
        part=$(basename "$(dirname "$o")")
        [ -f "$ROOT/src/$part/$(basename "$o" .o).c" ] && echo "$o" >> "$tmp/objs"
    done
    # "OBJ:ADDR TYPE SYMBOL", "OBJ: U SYMBOL" -> the part and src/PART/NAME.o of OBJ
    objpart='{ f = $1; sub(/:.*/, "", f); n = split(f, a, "/"); p = a[n - 1]; rel = "src/" p "/" a[n] }'
    : > "$tmp/defs"; : > "$tmp/undefs"
    if [ -s "$tmp/objs" ]; then
        xargs nm -A < "$tmp/objs" | awk "$objpart"' NF == 3 && $2 ~ /^[TDBRVWGSC]$/ { print $3, p }' > "$tmp/defs"
        xargs nm -A -u < "$tmp/objs" | awk "$objpart"' { print $NF, p, rel }' > "$tmp/undefs"
    else
        echo "$OBJ/src/*/*.o: no object of a source of src/ (build first)" > "$tmp/sym_bad"
    fi
    # a symbol defined by two parts is its first part's here (a duplicate fails the link anyway)
    awk 'NR == FNR { if (!($1 in d)) d[$1] = $2; next }
         FILENAME == ARGV[2] { ok[$1 " " $2] = 1; next }
         ($1 in d) && d[$1] != $2 && !(($2 " " d[$1]) in ok) {
             print $3 " uses " $1 " of " d[$1] ": " $2 " may not use " d[$1] " (docs/layers.txt)" }' \
        "$tmp/defs" "$tmp/allowed" "$tmp/undefs" | sort -u >> "$tmp/sym_bad"
fi
report "symbols: every call across parts in $OBJ/src keeps to docs/layers.txt" "$tmp/sym_bad"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
