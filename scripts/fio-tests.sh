#!/usr/bin/env bash
# Fetches fio 3.33's complete source (Debian's fio_3.33.orig.tar.gz, through apt's source
# index) for the test of fio's own test jobs (tests/integration/fio_tests.rs): unlike
# ../shared/fio-src, it holds fio's t/jobs/*.fio and t/run-fio-tests.py. The test reads the job
# files out of the tarball at run time; nothing of it enters the repository. apt runs with a
# private configuration (a deb-src line of its own under PREFIX), so the system's sources and
# lists stay as they are. Idempotent: prints the tarball's path and exits 0 when it is there.
#   scripts/fio-tests.sh [PREFIX]   (default /var/tmp/fio-tests)
set -euo pipefail
prefix=${1:-/var/tmp/fio-tests}
tarball=$prefix/fio_3.33.orig.tar.gz
if [ -f "$tarball" ] && tar -tzf "$tarball" fio-3.33/t/run-fio-tests.py >/dev/null 2>&1; then
  echo "$tarball"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "scripts/fio-tests.sh: apt-get is needed to fetch fio's source" >&2; exit 1; }
apt=$prefix/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
echo "deb-src http://deb.debian.org/debian bookworm main" >"$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/none"
  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root")
apt-get -qq "${opts[@]}" update >/dev/null
(cd "$prefix" && apt-get -qq "${opts[@]}" source --download-only fio=3.33-3 >/dev/null)
tar -tzf "$tarball" fio-3.33/t/run-fio-tests.py >/dev/null 2>&1 || { echo "scripts/fio-tests.sh: $tarball lacks fio's test jobs" >&2; exit 1; }
echo "$tarball"
