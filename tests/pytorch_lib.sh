# tests/pytorch_lib.sh - what tests/pytorch.sh and tests/pytorch_run.sh share, sourced by
# both from the checkout's root with WHAT (their checks' name in a failure: "pytorch
# checks"), KEEP (an SCV_ variable the environment keeps, or "") and TMPNAME: an environment
# without SCV_ variables, Open MPI allowed as root, ok/nok/check/finish, the prerequisites (a
# missing one is a failure, not a skip) and a temporary directory $T removed on exit.
set -u
PY=/usr/bin/python3
EX=examples/pytorch_fashion_mnist.py
DATA=/usr/share/datasets/fashion-mnist
[ -f "$EX" ] || { echo "not ok - $EX not found (run from the repository root)"; echo "0 passed, 1 failed"; exit 1; }
for v in $(env | sed -n 's/^\(SCV_[A-Z_]*\)=.*/\1/p'); do [ "$v" = "$KEEP" ] || unset "$v"; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PYTHONDONTWRITEBYTECODE=1

passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
nok() { echo "not ok - $1"; failed=$((failed + 1)); }
check() { # check NAME COMMAND...: ok when COMMAND succeeds (its output shown indented otherwise)
    name=$1; shift
    if out=$("$@" 2>&1); then ok "$name"; else nok "$name"; printf '%s\n' "$out" | sed 's/^/#   /'; fi
}
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

if ! $PY -c 'import torch, numpy' 2>/dev/null || [ ! -f "$DATA/train-images-idx3-ubyte.gz" ]; then
    nok "$WHAT: no /usr/bin/python3 torch or no $DATA (scripts/install-deps.sh installs them)"
    finish
fi
T=$(mktemp -d "/tmp/scv-$TMPNAME.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
