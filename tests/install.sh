#!/bin/sh
# The install test (packaging as a C library): `make install DESTDIR=TMP PREFIX=/usr/local`
#   1. puts every file where it belongs (binary, libscv.a, libscv.so with its soname and
#      links, scv.h, scv.pc, the data files with the learning-curve corpus, the man page,
#      the bash completion, the Python package);
#   2. a C program compiled against the installed header and library with `pkg-config
#      --cflags --libs scv` (shared, and static with --static) runs scv_plan_json and
#      prints the report `scavenger plan --json` prints; the shared one finds the catalog
#      and the learning-curve corpus beside the installed library;
#   3. the installed binary, run from another directory, finds its catalog (train
#      --vm-type, plan) under share/scavenger;
#   4. the man page renders without a warning (groff) and names every long option of every
#      command's --help; the bash completion offers the commands, every option of every
#      command's --help and the catalog's VM types;
#   5. the Python binding (tests/python_binding.py) plans on a real profile, from the
#      checkout and from the installed package (which loads the installed libscv.so);
#   6. `make uninstall DESTDIR=TMP` leaves nothing of ours, and only ours goes.
# Run from anywhere (the checkout is two directories above build/tests/test_install, or the
# working directory). Prints "ok N - name" / "not ok N - name: why" and "N passed, N failed"
# last; exits non-zero on a failure. About 10 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/../../Makefile" ] && [ -f "$here/../../include/scv.h" ]; then ROOT=$(cd "$here/../.." && pwd)
else ROOT=$(pwd); fi
cd "$ROOT" || exit 1
# the make of a `make check` this runs under passes its variables (CC=...) on, but not its
# jobserver, whose descriptors this process does not have
MAKEFLAGS=$(printf '%s\n' "${MAKEFLAGS:-}" | sed 's/ *--jobserver-[a-z]*=[^ ]*//g')
export MAKEFLAGS
unset MFLAGS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PYTHONDONTWRITEBYTECODE=1 LC_ALL=C
VERSION=$(sed -n 's/^#define SCV_VERSION "\(.*\)"$/\1/p' include/scv.h)
PY=$(command -v /usr/bin/python3 || command -v python3)

n=0 passed=0 failed=0
ok()     { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1: $2"; }
# check NAME WHY COMMAND...: WHY (single-quoted) is expanded (eval) only after a failure
check() {
    c_name=$1 c_why=$2; shift 2
    if "$@"; then ok "$c_name"; else eval "c_why=\"$c_why\""; not_ok "$c_name" "$c_why"; fi
}
# cond 'SHELL CONDITION': for check, a condition of several tests
cond() { eval "$1"; }

TOP=$(mktemp -d /tmp/scv-install.XXXXXX) || exit 1
trap 'rm -rf "$TOP"' EXIT
trap 'exit 1' INT TERM HUP
D=$TOP/root P=/usr/local
I=$D$P
W=$TOP/elsewhere # the working directory of the installed programs: no data/ there
mkdir -p "$W"

# ---- 1. make install ----
make install DESTDIR="$D" PREFIX="$P" >"$TOP/install.log" 2>&1; rc=$?
check "make install DESTDIR PREFIX" 'exit $rc: $(tail -n 5 "$TOP/install.log")' [ $rc -eq 0 ]
PYDIR=$(ls -d "$I"/lib/python3*/dist-packages 2>/dev/null | head -n 1)
missing=""
for f in bin/scavenger lib/libscv.a "lib/libscv.so.$VERSION" lib/libscv.so.0 lib/libscv.so include/scv.h \
         lib/pkgconfig/scv.pc share/scavenger/vm-catalog.csv share/scavenger/emulated-vms.csv \
         share/scavenger/vm-catalog-SOURCES.md share/scavenger/curves.jsonl share/man/man1/scavenger.1 \
         share/bash-completion/completions/scavenger; do
    [ -e "$I/$f" ] || missing="$missing $f"
done
for f in __init__.py planner.py; do [ -f "$PYDIR/scavenger/$f" ] || missing="$missing python/$f"; done
check "every file installed" 'missing:$missing' [ -z "$missing" ]
check "libscv.so -> libscv.so.0 -> libscv.so.$VERSION" '$(ls -l "$I"/lib/libscv.so* 2>&1 | tr "\n" " ")' \
      cond '[ "$(readlink "$I/lib/libscv.so")" = libscv.so.0 ] && [ "$(readlink "$I/lib/libscv.so.0")" = "libscv.so.$VERSION" ]'
soname=$(readelf -d "$I/lib/libscv.so.$VERSION" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "the soname is libscv.so.0" 'readelf says "$soname"' [ "$soname" = libscv.so.0 ]
check "the installed binary and library are executable, the header not" '$(ls -l "$I/bin/scavenger" "$I/include/scv.h")' \
      cond '[ -x "$I/bin/scavenger" ] && [ -x "$I/lib/libscv.so.$VERSION" ] && [ ! -x "$I/include/scv.h" ]'
check "scv.h is the checkout's" 'it differs' cmp -s include/scv.h "$I/include/scv.h"
check "the learning-curve corpus is the checkout's" 'it differs' cmp -s data/curves.jsonl "$I/share/scavenger/curves.jsonl"

# ---- 2. pkg-config, and a program built against the installed library ----
PC="env PKG_CONFIG_PATH=$I/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D pkg-config"
mv=$($PC --modversion scv 2>&1)
check "pkg-config --modversion scv" '"$mv", expected $VERSION' [ "$mv" = "$VERSION" ]
check "scv.pc has the prefix" '$(grep prefix= "$I/lib/pkgconfig/scv.pc")' grep -qx "prefix=$P" "$I/lib/pkgconfig/scv.pc"
# the installed binary trains from another directory: --vm-type is checked against the
# catalog, which it finds under share/scavenger
JOB="--model mlp --hidden 32 --dataset synthetic:2000 --seed 3 --progress never --iterations 40 --vm-type c5.xlarge"
(cd "$W" && "$I/bin/scavenger" train $JOB --batch 32 --metrics "$TOP/p1.jsonl" &&
    "$I/bin/scavenger" train $JOB --workers 2 --batch 128 --metrics "$TOP/p2.jsonl") >"$TOP/train.log" 2>&1; rc=$?
check "installed scavenger train --vm-type, from another directory" 'exit $rc: $(tail -n 3 "$TOP/train.log")' \
      cond '[ $rc -eq 0 ] && [ -s "$TOP/p1.jsonl" ] && [ -s "$TOP/p2.jsonl" ]'
out=$(cd "$W" && "$I/bin/scavenger" plan --help 2>&1)
check "installed scavenger plan --help" '$out' [ "${out#usage: scavenger plan}" != "$out" ]
(cd "$W" && "$I/bin/scavenger" plan --profile "$TOP/p1.jsonl,$TOP/p2.jsonl" --target-epochs 5 --json) \
    >"$TOP/plan-default.json" 2>&1
check "installed scavenger plan finds the installed catalog" '$(head -c 300 "$TOP/plan-default.json")' \
      grep -q "\"catalog\":\"$I/bin/../share/scavenger/vm-catalog.csv\"}" "$TOP/plan-default.json"
CAT=$I/share/scavenger/vm-catalog.csv
(cd "$W" && "$I/bin/scavenger" plan --profile "$TOP/p1.jsonl,$TOP/p2.jsonl" --target-epochs 5 --catalog "$CAT" \
    --json) >"$TOP/plan.json" 2>&1
check "installed scavenger plan --json" '$(head -c 300 "$TOP/plan.json")' grep -q '^{"chosen":{"vm":"c5.xlarge"' "$TOP/plan.json"

cat >"$TOP/prog.c" <<'EOF'
/* scv_plan_json from an installed libscv: argv[1] the profile, argv[2] the catalog or "-" */
#include <scv.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    char req[4096], *out = NULL;
    scv_err err = {0};
    if (argc < 3) return 2;
    if (strcmp(argv[2], "-")) snprintf(req, sizeof req, "{\"profile\":\"%s\",\"target_epochs\":5,\"catalog\":\"%s\"}", argv[1], argv[2]);
    else snprintf(req, sizeof req, "{\"profile\":\"%s\",\"target_epochs\":5}", argv[1]);
    int rc = scv_plan_json(req, &out, &err);
    if (rc != SCV_OK) {
        fprintf(stderr, "%s: %s\n", scv_errname(rc), err.msg);
        return 1;
    }
    if (puts(out) < 0) return 1;
    scv_json_free(out);
    /* the header's version and the library's at run time */
    printf("version %s %s %d %d\n", SCV_VERSION, scv_version(), SCV_VERSION_NUMBER, scv_version_number());
    /* where the library finds the learning-curve corpus */
    char buf[4096];
    printf("curves %s\n", scv_data_file("curves.jsonl", buf, sizeof buf));
    /* an error names the field */
    rc = scv_plan_json("{\"target_epochs\":\"5\"}", &out, &err);
    printf("%s %s\n", scv_errname(rc), err.msg);
    return 0;
}
EOF
cflags=$($PC --cflags scv 2>&1) libs=$($PC --libs scv 2>&1)
cc -std=c11 -Wall -Wextra -Werror -o "$TOP/prog" "$TOP/prog.c" $cflags $libs >"$TOP/cc.log" 2>&1; rc=$?
check "cc \$(pkg-config --cflags --libs scv) (shared)" 'exit $rc: $cflags $libs: $(head -c 400 "$TOP/cc.log")' [ $rc -eq 0 ]
dyn=$(LD_LIBRARY_PATH=$I/lib ldd "$TOP/prog" 2>&1 | grep libscv)
check "the program links the installed libscv.so.0" 'ldd: $dyn' \
      [ "${dyn#*libscv.so.0 => $I/lib/libscv.so.0}" != "$dyn" ]
(cd "$W" && LD_LIBRARY_PATH=$I/lib "$TOP/prog" "$TOP/p1.jsonl,$TOP/p2.jsonl" "$CAT") >"$TOP/prog.out" 2>&1
head -n 1 "$TOP/prog.out" >"$TOP/prog.json"
check "the program's scv_plan_json is scavenger plan --json" '$(head -c 300 "$TOP/prog.out")' \
      cmp -s "$TOP/prog.json" "$TOP/plan.json"
check "the program's error names the field" '$(tail -n 1 "$TOP/prog.out")' \
      grep -q '^SCV_EINVAL field "target_epochs": expected' "$TOP/prog.out"
mv=$($PC --modversion scv 2>&1)
vn=$(echo "$mv" | awk -F. '{ print $1 * 10000 + $2 * 100 + $3 }')
check "the program's scv.h and libscv.so are version $mv (pkg-config)" '$(grep ^version "$TOP/prog.out")' \
      grep -qx "version $mv $mv $vn $vn" "$TOP/prog.out"
(cd "$W" && LD_LIBRARY_PATH=$I/lib "$TOP/prog" "$TOP/p1.jsonl,$TOP/p2.jsonl" -) >"$TOP/prog2.out" 2>&1
check "libscv.so finds the catalog beside itself (lib/../share/scavenger)" '$(head -c 300 "$TOP/prog2.out")' \
      grep -q "\"catalog\":\"$I/lib/../share/scavenger/vm-catalog.csv\"}" "$TOP/prog2.out"
check "libscv.so finds the learning-curve corpus beside itself" '$(grep ^curves "$TOP/prog2.out")' \
      grep -qx "curves $I/lib/../share/scavenger/curves.jsonl" "$TOP/prog2.out"
# static: the archive and what it needs (Libs.private, Requires.private)
slibs=$(env PKG_CONFIG_PATH="$I/lib/pkgconfig" pkg-config --define-variable=prefix="$I" --static --libs scv 2>&1)
slibs=$(printf '%s\n' $slibs | grep -vx -- -lscv | tr '\n' ' ')
cc -std=c11 -o "$TOP/prog-static" "$TOP/prog.c" -I"$I/include" "$I/lib/libscv.a" $slibs >"$TOP/cc2.log" 2>&1; rc=$?
check "cc libscv.a \$(pkg-config --static --libs scv)" 'exit $rc: $slibs: $(head -c 400 "$TOP/cc2.log")' [ $rc -eq 0 ]
(cd "$W" && "$TOP/prog-static" "$TOP/p1.jsonl,$TOP/p2.jsonl" "$CAT") >"$TOP/prog3.out" 2>&1
head -n 1 "$TOP/prog3.out" >"$TOP/prog3.json"
check "the static program plans the same" '$(head -c 300 "$TOP/prog3.out")' \
      cond 'cmp -s "$TOP/prog3.json" "$TOP/plan.json" && ! ldd "$TOP/prog-static" | grep -q libscv'

# ---- 4. the man page and the bash completion ----
MAN=$I/share/man/man1/scavenger.1
if command -v groff >/dev/null; then
    gw=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1); rc=$?
    check "groff renders scavenger(1) without a warning" 'exit $rc: $gw' cond '[ $rc -eq 0 ] && [ -z "$gw" ]'
else
    not_ok "groff renders scavenger(1)" "groff is not installed (scripts/install-deps.sh installs groff-base)"
fi
if command -v man >/dev/null; then
    mo=$(MANWIDTH=80 man -l "$MAN" 2>&1)
    check "man -l shows every command" '$(printf "%s" "$mo" | head -n 5)' \
          sh -c 'for c in run runs train profile plan sweep cluster; do printf "%s" "$1" | grep -q "scavenger $c" || exit 1; done' \
          sh "$mo"
fi
CMDS="run runs train profile cluster sweep plan"
nodoc=""
for c in $CMDS; do
    for o in $("$I/bin/scavenger" $c --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        [ "$o" = --help ] && continue
        grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$MAN" || nodoc="$nodoc $c:$o"
    done
done
check "the man page names every option of every command's --help" 'not in it:$nodoc' [ -z "$nodoc" ]
if command -v bash >/dev/null; then
    cat >"$TOP/comp.bash" <<'EOF'
source "$1"
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _scavenger; printf '%s\n' "${COMPREPLY[*]}"; }
bad=""
[[ $(c scavenger pl) == plan ]] || bad+=" 'pl'->$(c scavenger pl)"
[[ " $(c scavenger '') " == *" sweep "* ]] || bad+=" ''->$(c scavenger '')"
[[ $(c scavenger plan --pro) == --profile ]] || bad+=" 'plan --pro'->$(c scavenger plan --pro)"
[[ $(c scavenger plan --objective k) == knee ]] || bad+=" '--objective k'"
[[ $(c scavenger cluster '') == "up down status throttle exec mpirun preempt restore replay" ]] || bad+=" 'cluster'->$(c scavenger cluster '')"
[[ " $(c scavenger plan --vm c5.xlarge,c5.2x) " == *" c5.xlarge,c5.2xlarge "* ]] || bad+=" '--vm c5.xlarge,c5.2x'->$(c scavenger plan --vm c5.xlarge,c5.2x)"
for cmd in run runs train profile cluster sweep plan; do
    offered=" $(c scavenger $cmd --) "
    for o in $(scavenger $cmd --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        [[ $o == --help || $offered == *" $o "* ]] || bad+=" $cmd:$o"
    done
done
[[ -z $bad ]] || { echo "$bad"; exit 1; }
EOF
    cb=$(cd "$W" && PATH="$I/bin:$PATH" bash "$TOP/comp.bash" "$I/share/bash-completion/completions/scavenger" 2>&1)
    rc=$?
    check "bash completion: commands, every --help option, values, VM types" 'exit $rc:$cb' [ $rc -eq 0 ]
else
    not_ok "bash completion" "bash is not installed"
fi

# ---- 5. the Python binding: the checkout's, then the installed one ----
if [ -n "$PY" ]; then
    pyout=$(PYTHONPATH="$ROOT/python" EXPECT_LIB="$ROOT/build/libscv.so" \
        "$PY" tests/python_binding.py "$TOP/p1.jsonl" "$TOP/p2.jsonl" "$TOP/plan.json" "$CAT" 2>&1); rc=$?
    check "python binding from the checkout (build/libscv.so)" 'exit $rc: $(printf "%s\n" "$pyout" | grep -v "^ok" | head -n 8)' \
          cond '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$pyout" | tail -n 1)" = "13 passed, 0 failed" ]'
    pyout=$(cd "$W" && PYTHONPATH="$PYDIR" EXPECT_LIB="$I/lib/libscv.so.$VERSION" \
        "$PY" "$ROOT/tests/python_binding.py" "$TOP/p1.jsonl" "$TOP/p2.jsonl" "$TOP/plan.json" "$CAT" 2>&1); rc=$?
    check "python binding installed (its libscv.so, from another directory)" \
          'exit $rc: $(printf "%s\n" "$pyout" | grep -v "^ok" | head -n 8)' \
          cond '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$pyout" | tail -n 1)" = "13 passed, 0 failed" ]'
else
    not_ok "python binding" "python3 is not installed (scripts/install-deps.sh installs it)"
fi

# ---- 6. make uninstall ----
echo keep >"$I/bin/not-ours"
make uninstall DESTDIR="$D" PREFIX="$P" >"$TOP/uninstall.log" 2>&1; rc=$?
check "make uninstall DESTDIR PREFIX" 'exit $rc: $(tail -n 5 "$TOP/uninstall.log")' [ $rc -eq 0 ]
check "uninstall leaves what is not ours" 'bin/not-ours is gone' [ -f "$I/bin/not-ours" ]
rm -f "$I/bin/not-ours"
left=$(find "$D" ! -type d 2>&1 | head -n 10 | tr '\n' ' ')
check "uninstall leaves no file of ours" 'left: $left' [ -z "$left" ]
check "uninstall removes share/scavenger" 'it is still there' [ ! -e "$I/share/scavenger" ]

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
