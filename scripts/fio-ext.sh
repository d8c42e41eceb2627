#!/usr/bin/env bash
# Builds fio 3.33 from ../shared/fio-src with the engines Debian's package leaves out (libiscsi,
# nfs, http) as a reference binary for the differential tests of those engines. It is a test
# fixture only: run, compared against, never copied. Idempotent: prints the binary's path and
# exits 0 when it is already built; builds it once (about 2 minutes) otherwise.
#   scripts/fio-ext.sh [PREFIX]   (default /var/tmp/fio-3.33-ext)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/var/tmp/fio-3.33-ext}
src=${FIOX_FIO_SRC:-$(cd .. && pwd)/shared/fio-src}/fio-3.33.tar.gz
bin=$prefix/fio-3.33/fio
if [ -x "$bin" ] && "$bin" --enghelp 2>/dev/null | grep -q libiscsi; then
  echo "$bin"
  exit 0
fi
[ -f "$src" ] || { echo "scripts/fio-ext.sh: no fio source at $src" >&2; exit 1; }
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  pkgs="gcc make pkg-config libaio-dev zlib1g-dev libiscsi-dev libnfs-dev libcurl4-openssl-dev libssl-dev"
  # shellcheck disable=SC2086
  dpkg -s $pkgs >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq $pkgs >/dev/null; }
fi
mkdir -p "$prefix"
rm -rf "$prefix/fio-3.33"
tar -xzf "$src" -C "$prefix"
(cd "$prefix/fio-3.33" && ./configure --enable-libiscsi >/dev/null && make -j"$(nproc)" >/dev/null 2>&1)
"$bin" --enghelp 2>/dev/null | grep -q libiscsi || { echo "scripts/fio-ext.sh: the build lacks the libiscsi engine" >&2; exit 1; }
echo "$bin"
