#!/usr/bin/env bash
# Builds fio 3.42 from ../shared/fio-src with its libblkio engine, as the reference binary for
# the libblkio engine's differential tests. Debian 12 has no libblkio; Debian 13 packages it
# (libblkio1, libblkio-dev), so those two packages are fetched with apt from the next release of
# the archive this machine already uses, through a private apt state under DIR (the system's
# sources, lists and installed packages are left alone), and unpacked under DIR without being
# installed. libblkio1 needs only libc6 >= 2.34 and libgcc-s1, which Debian 12 has.
# A test fixture only: run, compared against, never copied. Idempotent: prints the fio binary's
# path and exits 0 when it is already built; otherwise builds it once (about 2 minutes).
#   scripts/fio-blkio.sh [DIR]   (default /var/tmp/fio-3.42-blkio)
# Afterwards DIR/libblkio/lib holds libblkio.so.1 (fiox loads it from LD_LIBRARY_PATH; the fio
# binary has it in its run path) and DIR/fio-3.42/fio is fio.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/var/tmp/fio-3.42-blkio}
src=${FIOX_FIO_SRC:-$(cd .. && pwd)/shared/fio-src}/fio-3.42.tar.gz
bin=$dir/fio-3.42/fio
lib=$dir/libblkio
if [ -x "$bin" ] && [ -e "$lib/lib/libblkio.so.1" ] && "$bin" --enghelp 2>/dev/null | grep -qx '[[:space:]]*libblkio'; then
  echo "$bin"
  exit 0
fi
[ -f "$src" ] || { echo "scripts/fio-blkio.sh: no fio source at $src" >&2; exit 1; }
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || {
  echo "scripts/fio-blkio.sh: needs root and apt-get to fetch libblkio" >&2
  exit 1
}
export DEBIAN_FRONTEND=noninteractive
pkgs="gcc make pkg-config libaio-dev zlib1g-dev"
# shellcheck disable=SC2086
dpkg -s $pkgs >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq $pkgs >/dev/null; }
mkdir -p "$dir"
if [ ! -e "$lib/lib/libblkio.so.1" ]; then
  # The archive's address as this machine's own apt sources give it (deb822 or one-line form).
  uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  [ -n "$uri" ] || { echo "scripts/fio-blkio.sh: no Debian archive in this machine's apt sources" >&2; exit 1; }
  apt_dir=$dir/apt
  rm -rf "$apt_dir" "$lib"
  mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$lib"
  touch "$apt_dir/status"
  printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" >"$apt_dir/sources/trixie.sources"
  apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir/sources"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Dir::State::status=$apt_dir/status"
    -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq >/dev/null
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download -qq libblkio1 libblkio-dev >/dev/null)
  for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$apt_dir/root"; done
  mkdir -p "$lib/lib/pkgconfig" "$lib/include"
  cp -a "$apt_dir"/root/usr/lib/*/libblkio.so* "$lib/lib/"
  cp -a "$apt_dir"/root/usr/include/blkio.h "$lib/include/"
  version=$(sed -n 's/^Version:[[:space:]]*//p' "$apt_dir"/root/usr/lib/*/pkgconfig/blkio.pc)
  printf 'prefix=%s\nincludedir=${prefix}/include\nlibdir=${prefix}/lib\n\nName: blkio\nDescription: Block device I/O library\nVersion: %s\nLibs: -L${libdir} -lblkio\nCflags: -I${includedir}\n' \
    "$lib" "$version" >"$lib/lib/pkgconfig/blkio.pc"
  rm -rf "$apt_dir"
fi
rm -rf "$dir/fio-3.42"
tar -xzf "$src" -C "$dir"
(
  cd "$dir/fio-3.42"
  PKG_CONFIG_PATH=$lib/lib/pkgconfig LDFLAGS="-Wl,-rpath,$lib/lib" ./configure >configure.out
  grep -q '^libblkio engine[[:space:]]*yes' configure.out || { echo "scripts/fio-blkio.sh: fio's configure found no libblkio" >&2; exit 1; }
  make -j"$(nproc)" >/dev/null 2>&1
)
"$bin" --enghelp 2>/dev/null | grep -qx '[[:space:]]*libblkio' || { echo "scripts/fio-blkio.sh: the build lacks the libblkio engine" >&2; exit 1; }
echo "$bin"
