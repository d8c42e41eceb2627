#!/usr/bin/env bash
# Builds fio 3.42 from ../shared/fio-src for a generic x86-64 CPU (configure --disable-native) as
# the reference binary for the NVMe passthrough tests that run inside a qemu guest: a fio built
# with -march=native for this host dies there with "Illegal instruction", since the guest's
# emulated CPU (TCG, -cpu max) lacks some of the host's instructions. fio 3.42 is needed there
# for the io_uring_cmd options fio 3.33 lacks (md_per_io_size, pi_act, pi_chk, apptag, deac,
# write_mode, readfua/writefua). A test fixture only: run, compared against, never copied.
# Idempotent: prints the binary's path and exits 0 when it is already built; otherwise builds it
# once (about 2 minutes).
#   scripts/fio-generic.sh [PREFIX]   (default /var/tmp/fio-3.42-generic)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/var/tmp/fio-3.42-generic}
src=${FIOX_FIO_SRC:-$(cd .. && pwd)/shared/fio-src}/fio-3.42.tar.gz
bin=$prefix/fio-3.42/fio
if [ -x "$bin" ] && [ -f "$prefix/fio-3.42/.generic" ] && "$bin" --enghelp=io_uring_cmd 2>/dev/null | grep -q '^md_per_io_size'; then
  echo "$bin"
  exit 0
fi
[ -f "$src" ] || { echo "scripts/fio-generic.sh: no fio source at $src" >&2; exit 1; }
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  pkgs="gcc make pkg-config libaio-dev zlib1g-dev"
  # shellcheck disable=SC2086
  dpkg -s $pkgs >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq $pkgs >/dev/null; }
fi
mkdir -p "$prefix"
rm -rf "$prefix/fio-3.42"
tar -xzf "$src" -C "$prefix"
(
  cd "$prefix/fio-3.42"
  ./configure --disable-native >configure.out
  # configure prints "Build march=native  no" once native code generation is off.
  grep -q '^Build march=native[[:space:]]*no' configure.out || { echo "scripts/fio-generic.sh: configure still builds for this CPU" >&2; exit 1; }
  make -j"$(nproc)" >/dev/null 2>&1
  touch .generic
)
"$bin" --enghelp=io_uring_cmd 2>/dev/null | grep -q '^md_per_io_size' || { echo "scripts/fio-generic.sh: the build lacks io_uring_cmd's metadata options" >&2; exit 1; }
echo "$bin"
