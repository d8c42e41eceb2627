#!/usr/bin/env bash
# Runs every test. The differential tests compare fiox with the real fio 3.33 (Debian's package),
# so this installs it first when it is missing and we may (root, apt available).
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
cargo test --workspace "$@"
