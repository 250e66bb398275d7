#!/bin/sh
# Installs the Debian 12 packages Scavenger needs to build, test and benchmark.
# Idempotent: only missing packages are installed; runs apt-get update at most once.
# clang and libclang-rt-14-dev (libFuzzer and clang's sanitizer runtimes; only a
# recommendation of clang-14, so named here) build the fuzz harnesses of `make fuzz`/`check`;
# clang-format (with clang-format-diff) checks the format of changed C lines in `make check`;
# the sqlite3 CLI runs PRAGMA integrity_check in tests/faults.sh; groff-base renders the man
# page and python3 runs the Python binding in tests/install.sh; PyTorch (Debian's 1.13 and
# torchvision) runs the example trainer of the exec driver's tests and the peer benchmarks;
# chromium (headless) and curl run the dashboard's browser test (tests/browser.sh), and
# apache2-utils' ab the service's load test (bench/serve_load.sh).
# Usage: scripts/install-deps.sh
set -eu
PKGS="build-essential pkg-config zlib1g-dev libopenmpi-dev openmpi-bin libdnnl-dev \
dataset-fashion-mnist libsqlite3-dev libmicrohttpd-dev libcjson-dev iproute2 procps \
clang libclang-rt-14-dev clang-format sqlite3 groff-base python3 python3-torch python3-torchvision python3-numpy \
chromium curl apache2-utils"
missing=""
for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages:$missing (run as root to install them)" >&2
    exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
