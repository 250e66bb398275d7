#!/bin/sh
# layers.sh - the test of scripts/check-layers.sh (the layers of docs/layers.txt): it
# passes on this tree and its build, and it fails, naming the file, when a copy of the
# tree gets a forbidden dependency injected: an #include across a forbidden direction, a
# call across one (an object of model/ calling the loop in search/), <sqlite3.h> outside
# store.c, a system header in the pure model/. Also the export check
# (scripts/check-exports.sh) against build/libscv.so. Run from the repository root after
# the release build (tests/run.sh counts it as build/tests/test_layers).
set -u
TOP=$(pwd)
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# the real tree passes
if out=$(sh "$TOP/scripts/check-layers.sh" "$TOP" "$TOP/build" 2>&1); then
    ok "the tree keeps to docs/layers.txt"
else
    bad "the tree breaks docs/layers.txt: $(printf '%s' "$out" | grep 'not ok' | head -5)"
fi
if out=$(sh "$TOP/scripts/check-exports.sh" "$TOP/build/libscv.so" "$TOP/include/scv.h" 2>&1); then
    ok "libscv.so exports exactly what scv.h declares"
else
    bad "exports: $(printf '%s' "$out" | grep 'not ok' | head -5)"
fi

# a copy of the tree (sources, header, layers, objects) to break
fresh() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/docs" "$tmp/t/build"
    cp -R "$TOP/src" "$TOP/include" "$tmp/t/"
    cp "$TOP/docs/layers.txt" "$TOP/docs/ARCHITECTURE.md" "$tmp/t/docs/"
    (cd "$TOP/build" && find src -name '*.o' | cpio -pdm --quiet "$tmp/t/build") 2>/dev/null || \
        (cd "$TOP/build" && tar cf - $(find src -name '*.o')) | (cd "$tmp/t/build" && tar xf -)
}
# expect_fail NAME PATTERN: the check fails on the copy and its output matches PATTERN
expect_fail() {
    if out=$(sh "$TOP/scripts/check-layers.sh" "$tmp/t" "$tmp/t/build" 2>&1); then
        bad "$1: the check passed"
    elif printf '%s\n' "$out" | grep 'not ok' | grep -q "$2"; then
        ok "$1: $(printf '%s\n' "$out" | grep 'not ok' | grep "$2" | head -1 | sed 's/^not ok - //')"
    else
        bad "$1: failed without naming '$2': $(printf '%s' "$out" | grep 'not ok' | head -3)"
    fi
}

fresh
if out=$(sh "$TOP/scripts/check-layers.sh" "$tmp/t" "$tmp/t/build" 2>&1); then
    ok "the copy of the tree passes before anything is injected"
else
    bad "the copy fails untouched: $(printf '%s' "$out" | grep 'not ok' | head -3)"
fi

# an include across a forbidden direction: model/ (pure) including the loop's header
sed -i 's|^#include "scv.h"|#include "scv.h"\n#include "../search/progress.h"|' "$tmp/t/src/model/perf.c"
expect_fail "an injected #include of search/ in model/perf.c" 'src/model/perf.c:[0-9]* includes "../search/progress.h": model may not use search'

# a call across a forbidden direction: an object of model/ calling scv_run_params_default
# (search/), and one of store/ calling the trainer (runtime/)
fresh
cat > "$tmp/t/src/model/injected.c" <<'EOF'
#include "scv.h"
int scv_injected_model(void) { return scv_run_params_default().n_workers > 0; }
EOF
cc -std=c11 -I"$TOP/include" -c -o "$tmp/t/build/src/model/injected.o" "$tmp/t/src/model/injected.c"
expect_fail "an injected call of search/ from model/" 'src/model/injected.o uses scv_run_params_default of search: model may not use search'
rm -f "$tmp/t/src/model/injected.c" "$tmp/t/build/src/model/injected.o"
cat > "$tmp/t/src/store/injected.c" <<'EOF'
#include "scv.h"
int scv_injected_store(void) { scv_train_params p = scv_train_params_default(); return p.batch; }
EOF
cc -std=c11 -I"$TOP/include" -c -o "$tmp/t/build/src/store/injected.o" "$tmp/t/src/store/injected.c"
expect_fail "an injected call of runtime/ from store/" 'src/store/injected.o uses scv_train_params_default of runtime: store may not use runtime'

# the drivers never call the loop (they fill the table it is handed; job/ joins the two):
# an object of drivers/ calling the loop's parameters, and an include of the loop's job
# table in a driver
fresh
cat > "$tmp/t/src/drivers/injected.c" <<'EOF'
#include "scv.h"
int scv_injected_driver(void) { return scv_run_params_default().n_workers > 0; }
EOF
cc -std=c11 -I"$TOP/include" -c -o "$tmp/t/build/src/drivers/injected.o" "$tmp/t/src/drivers/injected.c"
expect_fail "an injected call of search/ from drivers/" 'src/drivers/injected.o uses scv_run_params_default of search: drivers may not use search'
fresh
sed -i 's|^#include "scv.h"|#include "scv.h"\n#include "../search/jobopts.h"|' "$tmp/t/src/drivers/exec.c"
expect_fail "an injected #include of search/ in drivers/exec.c" 'src/drivers/exec.c:[0-9]* includes "../search/jobopts.h": drivers may not use search'

# the data and its drawing: a part using a part listed after it (a cycle), the data
# letting drivers/ use search/ again without the drawing's table, and a drawing whose
# parts are in another order than the data's
fresh
sed -i 's/^part model    core$/part model    core io/' "$tmp/t/docs/layers.txt"
expect_fail "model/ given io/, a part listed after it" 'docs/layers.txt:[0-9]*: model uses io, not a part listed before it'
fresh
sed -i 's/^part drivers  runtime/part drivers  search runtime/' "$tmp/t/docs/layers.txt"
expect_fail "layers.txt letting drivers/ use search/, the drawing's table not" 'its layer table differs from docs/layers.txt'
fresh
sed -i 's|^search/     THE LOOP|  search/   THE LOOP|' "$tmp/t/docs/ARCHITECTURE.md"
expect_fail "a drawing without search/ at its place" "its drawing's parts, top down, are .*but docs/layers.txt's are"

# the one-file rules and the pure model
fresh
sed -i 's|^#include "scv.h"|#include "scv.h"\n#include <sqlite3.h>|' "$tmp/t/src/io/catalog.c"
expect_fail "<sqlite3.h> injected in io/catalog.c" 'src/io/catalog.c includes <sqlite3.h>: only src/store/store.c may'
fresh
sed -i 's|^#include "scv.h"|#include "scv.h"\n#include <unistd.h>|' "$tmp/t/src/model/stat.c"
expect_fail "<unistd.h> injected in model/stat.c" 'src/model/stat.c:[0-9]* includes <unistd.h>: model uses the C library only'

# a new directory under src/ that the layers do not name
fresh
mkdir "$tmp/t/src/extra" && printf '#include "scv.h"\n' > "$tmp/t/src/extra/x.c"
expect_fail "a part docs/layers.txt does not name" 'src/extra/: a part docs/layers.txt does not name'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
