#!/usr/bin/env bash
# Runs every test. The differential tests compare fiox with the real fio 3.33 (Debian's package),
# and the lab tests open a results page in headless Chromium, so this installs both first when
# they are missing and we may (root, apt available).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v fio >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing Debian's fio for the differential tests" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq fio >/dev/null
  else
    echo "scripts/test.sh: fio is not installed and cannot be installed here (need root and apt-get)" >&2
    exit 1
  fi
fi
# The lab tests load the results page in a real browser: Debian's chromium.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing Debian's chromium for the results-page test" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
  else
    echo "scripts/test.sh: chromium is not installed and cannot be installed here (need root and apt-get)" >&2
    exit 1
  fi
fi
# The fault tests serve a disk with planted errors through nbdkit and nbdfuse.
if ! command -v nbdkit >/dev/null 2>&1 || ! command -v nbdfuse >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing nbdkit and nbdfuse for the fault tests" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq nbdkit libnbd-bin >/dev/null
  else
    echo "scripts/test.sh: nbdkit/nbdfuse are not installed and cannot be installed here; fault tests will skip" >&2
  fi
fi
# The kernel-hint tests compare the system calls of both tools under strace.
if ! command -v strace >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing strace for the kernel-hint tests" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq strace >/dev/null
  else
    echo "scripts/test.sh: strace is not installed and cannot be installed here (need root and apt-get)" >&2
    exit 1
  fi
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line with the totals over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
