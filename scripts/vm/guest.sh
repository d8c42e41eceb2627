#!/usr/bin/env bash
# Boots a throw-away Linux guest under qemu (TCG: software emulation, no KVM needed) with emulated
# storage devices, runs one command in it and hands back the command's output and exit status.
# The tests use it to run fio and fiox on devices this machine lacks (NVMe ZNS and passthrough,
# SCSI generic, NVDIMM, null_blk, scsi_debug). It is a test fixture: fiox knows nothing of it.
#
#   scripts/vm/guest.sh setup                         install what is missing, fill the cache
#   scripts/vm/guest.sh run [-d SETS] [-t SECS] [-m MiB] [-s DIR]... -- COMMAND [ARG...]
#
# The guest runs Debian's stock kernel (its package is fetched with `apt-get download` and only
# unpacked, under $FIOX_GUEST_CACHE, default /var/tmp/fiox-guest) and the host's own userland:
# a small busybox initramfs mounts the host's / read-only over virtio-9p with a tmpfs overlay on
# top (so the guest may write anywhere; it all vanishes at power-off), then runs COMMAND as root
# in the caller's working directory. `-s DIR` shares DIR read-write at the same path.
#
# Device sets (-d, comma-separated):
#   nvme-zns  /dev/nvme0n1 zoned (host-managed, 16 MiB zones, 256 MiB) and /dev/nvme0n2
#             conventional (128 MiB), with the passthrough nodes /dev/ng0n1, /dev/ng0n2
#   nvme      /dev/nvme0n1 conventional (128 MiB), /dev/ng0n1
#   nvme-pi   /dev/ng0n1..4 (and their block devices), 512-byte LBAs, with separate metadata
#             but for n4: n1 8 bytes of type 1 protection information, n2 16 bytes without,
#             n3 16 bytes with type 1 protection information first (about 32 MiB of data each)
#   scsi      /dev/sda (virtio-scsi disk, 128 MiB) and its /dev/sg0
#   pmem      /dev/pmem0, a label-less NVDIMM (512 MiB); ndctl turns it into fsdax or devdax
#   none      nothing; the guest may still `modprobe null_blk` or `scsi_debug` (then run
#             `guest-coldplug`, as there is no udev)
# Exit status: COMMAND's; 124 when the time limit (-t, default 600 s) ran out; 125 when the
# guest never reported one (the console log then goes to stderr).
set -euo pipefail

CACHE=${FIOX_GUEST_CACHE:-/var/tmp/fiox-guest}
say() { echo "guest.sh: $*" >&2; }
die() { say "$*"; exit 125; }

# The host packages: qemu and kmod (depmod, modprobe -d) boot the guest, busybox-static is the
# initramfs, and the rest are tools the tests run inside the guest (iproute2's `rdma` and the
# verbs providers attach soft-RoCE to a network device for the rdma engine's tests).
PACKAGES=(qemu-system-x86 kmod busybox-static ndctl daxctl nvme-cli sg3-utils util-linux iproute2 ibverbs-providers
  librdmacm1)

install_missing() {
  local p missing=()
  for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || die "missing packages: ${missing[*]} (need root and apt-get)"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local try
  for try in 1 2 3 4 5 6; do
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null && return 0
    # A stale package list, or apt's lock held by someone else: refresh, wait, try again.
    apt-get update -qq >/dev/null 2>&1 || true
    sleep $((try * 5))
  done
  die "cannot install ${missing[*]}"
}

# The kernel: the package Debian's linux-image-amd64 points at (or $FIOX_GUEST_KERNEL_PKG),
# unpacked, with its modules indexed, and its ELF image pulled out of the bzImage so qemu can
# start it directly (PVH): that spares the emulated CPU the decompression at every boot.
fetch_kernel() {
  [ -f "$CACHE/kernel/version" ] && return 0
  local pkg=${FIOX_GUEST_KERNEL_PKG:-}
  [ -n "$pkg" ] || pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  [ -n "$pkg" ] || { apt-get update -qq >/dev/null 2>&1 || true
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'); }
  [ -n "$pkg" ] || die "cannot tell which kernel package linux-image-amd64 names"
  local tmp="$CACHE/kernel.new"
  rm -rf "$tmp" && mkdir -p "$tmp/deb"
  say "fetching $pkg (unpacked into $CACHE, never installed)"
  (cd "$tmp/deb" && apt-get download -q "$pkg" >/dev/null) || die "apt-get download $pkg failed"
  dpkg-deb -x "$tmp"/deb/*.deb "$tmp/root" && rm -rf "$tmp/deb"
  local kver
  kver=$(ls "$tmp/root/lib/modules")
  depmod -b "$tmp/root" "$kver"
  local bz="$tmp/root/boot/vmlinuz-$kver" at
  at=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -1 | cut -d: -f1 || true)
  if [ -n "$at" ]; then
    tail -c +$((at + 1)) "$bz" | xz -dcq > "$tmp/root/boot/vmlinux-$kver" 2>/dev/null || true
    [ "$(head -c 4 "$tmp/root/boot/vmlinux-$kver" | tail -c 3)" = ELF ] || rm -f "$tmp/root/boot/vmlinux-$kver"
  fi
  echo "$kver" > "$tmp/version"
  rm -rf "$CACHE/kernel" && mv "$tmp" "$CACHE/kernel"
}

# The initramfs: busybox and the modules that reach the host's root (virtio PCI, 9p, overlay).
build_initramfs() {
  local kver
  kver=$(cat "$CACHE/kernel/version")
  [ -f "$CACHE/initramfs-$kver.gz" ] && return 0
  local st="$CACHE/initramfs.new" m
  rm -rf "$st" && mkdir -p "$st"/{bin,lib,proc,sys,dev,root}
  cp /bin/busybox "$st/bin/"
  : > "$st/lib/load"
  for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$CACHE/kernel/root" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++' | while read -r m; do
    cp "$m" "$st/lib/" && basename "$m" >> "$st/lib/load"
  done
  cat > "$st/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc && mount -t sysfs sysfs /sys && mount -t devtmpfs dev /dev
halt() { echo "guest init: $*" > /dev/console; echo o > /proc/sysrq-trigger; sleep 30; }
for m in $(cat /lib/load); do insmod "/lib/$m" || halt "insmod $m failed"; done
mkdir -p /host /rw
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 host /host || halt "no host root"
mount -t tmpfs -o mode=0755 rw /rw && mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work root /root || halt "no overlay"
mount -t tmpfs -o mode=0755 run /root/run && mkdir -p /root/run/guest
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 ctl /root/run/guest || halt "no control dir"
for d in dev proc sys; do mount --move /$d /root/$d; done
exec switch_root /root /bin/sh /run/guest/inside.sh
INIT
  chmod 755 "$st/init"
  (cd "$st" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$CACHE/initramfs.tmp"
  mv "$CACHE/initramfs.tmp" "$CACHE/initramfs-$kver.gz" && rm -rf "$st"
}

setup() {
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.lock"
  flock 8
  install_missing
  fetch_kernel
  build_initramfs
  exec 8>&-
}

run() {
  local sets=none secs=600 mem=768 shares=()
  while [ $# -gt 0 ]; do
    case $1 in
      -d) sets=$2; shift 2 ;;
      -t) secs=$2; shift 2 ;;
      -m) mem=$2; shift 2 ;;
      -s) shares+=("$(realpath "$2")"); shift 2 ;;
      --) shift; break ;;
      *) die "unknown option $1" ;;
    esac
  done
  [ $# -gt 0 ] || die "no command given"
  setup
  local kver kernel
  kver=$(cat "$CACHE/kernel/version")
  kernel="$CACHE/kernel/root/boot/vmlinux-$kver"
  [ -f "$kernel" ] || kernel="$CACHE/kernel/root/boot/vmlinuz-$kver"
  # Globals, as the exit trap needs them after this function has returned.
  # The device images live in memory (/dev/shm) where there is one: on the host's disk, heavy
  # writeback from other work (a large copy, other tests' files) stalled the emulated NVMe's
  # writes for a minute, which a test then read as a hung device.
  local base=${FIOX_GUEST_TMP:-/dev/shm}
  [ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
  dir=$(mktemp -d "$base/fiox-guest.XXXXXX")
  qemu_pid=
  local ctl="$dir/ctl"
  mkdir "$ctl"
  trap 'if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null || true; fi; rm -rf "$dir"' EXIT
  trap 'exit 130' INT TERM
  # The command, quoted for sh.
  { echo '#!/bin/sh'; local a; for a in "$@"; do printf "'%s' " "${a//\'/\'\\\'\'}"; done; echo; } > "$ctl/command"
  local q=(-nodefaults -no-user-config -display none -no-reboot -serial "file:$dir/console"
    -accel tcg,tb-size=128 -cpu max -smp 1
    -kernel "$kernel" -initrd "$CACHE/initramfs-$kver.gz"
    -fsdev local,id=host,path=/,security_model=none,readonly=on,multidevs=remap
    -device virtio-9p-pci,fsdev=host,mount_tag=host
    -fsdev "local,id=ctl,path=$ctl,security_model=none"
    -device virtio-9p-pci,fsdev=ctl,mount_tag=ctl)
  local i=0 s
  for s in "${shares[@]}"; do
    q+=(-fsdev "local,id=share$i,path=$s,security_model=passthrough,multidevs=remap"
      -device "virtio-9p-pci,fsdev=share$i,mount_tag=share$i")
    echo "share$i $s" >> "$ctl/shares"
    i=$((i + 1))
  done
  local machine=pc memory="${mem}M" modules="" wait="" set img
  IFS=, read -r -a set <<< "$sets"
  for s in "${set[@]}"; do
    img="$dir/$s.img"
    case $s in
      none) ;;
      nvme-zns)
        truncate -s 256M "$img" && truncate -s 128M "$dir/conv.img"
        q+=(-device nvme,id=nvme0,serial=fioxzns,zoned.zasl=5
          -drive "file=$img,if=none,id=zns,format=raw,cache=unsafe,discard=unmap"
          -device nvme-ns,drive=zns,bus=nvme0,nsid=1,zoned=true,zoned.zone_size=16M,zoned.zone_capacity=16M
          -drive "file=$dir/conv.img,if=none,id=conv,format=raw,cache=unsafe,discard=unmap"
          -device nvme-ns,drive=conv,bus=nvme0,nsid=2)
        modules+=" nvme" wait+=" /dev/nvme0n1 /dev/nvme0n2 /dev/ng0n1 /dev/ng0n2" ;;
      nvme-pi)
        # Namespaces with metadata (ms= bytes per LBA, in a buffer of their own: mset=0):
        # 1 with type 1 protection information in its 8 bytes, 2 without any, 3 with type 1
        # protection information in the first 8 of 16 bytes (pil=1); 4 without metadata.
        local n opts=("ms=8,pi=1" "ms=16,pi=0" "ms=16,pi=1,pil=1" "ms=0")
        q+=(-device nvme,id=nvmepi,serial=fioxpi)
        for n in 1 2 3 4; do
          truncate -s 36M "$dir/pi$n.img"
          q+=(-drive "file=$dir/pi$n.img,if=none,id=pi$n,format=raw,cache=unsafe,discard=unmap"
            -device "nvme-ns,drive=pi$n,bus=nvmepi,nsid=$n,mset=0,${opts[n - 1]}")
          wait+=" /dev/ng0n$n"
        done
        modules+=" nvme" ;;
      nvme)
        truncate -s 128M "$img"
        q+=(-drive "file=$img,if=none,id=nvm,format=raw,cache=unsafe,discard=unmap" -device nvme,serial=fioxnvme,drive=nvm)
        modules+=" nvme" wait+=" /dev/nvme0n1 /dev/ng0n1" ;;
      scsi)
        truncate -s 128M "$img"
        q+=(-device virtio-scsi-pci,id=scsi -drive "file=$img,if=none,id=sd,format=raw,cache=unsafe,discard=unmap"
          -device scsi-hd,drive=sd,bus=scsi.0)
        modules+=" virtio_scsi sd_mod sg" wait+=" /dev/sda /dev/sg0" ;;
      pmem)
        truncate -s 512M "$img"
        machine=pc,nvdimm=on memory="${mem}M,slots=2,maxmem=$((mem + 1536))M"
        q+=(-object "memory-backend-file,id=pm,share=on,mem-path=$img,size=512M" -device nvdimm,memdev=pm)
        modules+=" nfit nd_pmem dax_pmem device_dax" wait+=" /dev/pmem0" ;;
      *) die "unknown device set '$s'" ;;
    esac
  done
  q+=(-machine "$machine" -m "$memory")
  cat > "$ctl/inside.sh" <<INSIDE
#!/bin/sh
# PID 1 of the guest, on the overlay of the host's root.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
mkdir -p /dev/pts /dev/shm && mount -t devpts pts /dev/pts && mount -t tmpfs shm /dev/shm
ln -s /proc/self/fd /dev/fd
for n in 0:stdin 1:stdout 2:stderr; do ln -s /proc/self/fd/\${n%%:*} /dev/\${n#*:}; done
mkdir -p /lib/modules && ln -sfn '$CACHE/kernel/root/lib/modules/$kver' /lib/modules/$kver
echo /sbin/modprobe > /proc/sys/kernel/modprobe
if [ -f /run/guest/shares ]; then
  while read -r tag path; do
    mkdir -p "\$path" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 "\$tag" "\$path"
  done < /run/guest/shares
fi
# No udev here: guest-coldplug loads the drivers of the devices present, as udev's coldplug does.
printf '%s\n' '#!/bin/sh' 'for i in 1 2 3; do cat /sys/bus/*/devices/*/modalias 2>/dev/null | sort -u | xargs -r modprobe -qab; ls /sys/bus/scsi/devices 2>/dev/null | grep -q : && modprobe -q sg; sleep 0.3; done' > /usr/local/sbin/guest-coldplug
chmod 755 /usr/local/sbin/guest-coldplug
for m in $modules; do modprobe \$m; done
for d in $wait; do
  n=0; while [ ! -e \$d ] && [ \$n -lt 300 ]; do sleep 0.1; n=\$((n + 1)); done
done
cd '$PWD' 2>/dev/null || cd /
sh /run/guest/command < /dev/null > /run/guest/stdout 2> /run/guest/stderr
echo \$? > /run/guest/status.new && mv /run/guest/status.new /run/guest/status
sync
echo o > /proc/sysrq-trigger
sleep 30
INSIDE
  local append="console=ttyS0 panic=-1 oops=panic loglevel=4 rdinit=/init mitigations=off tsc=reliable no_timer_check clocksource=tsc"
  timeout -k 5 "$secs" qemu-system-x86_64 "${q[@]}" -append "$append" > "$dir/qemu.log" 2>&1 &
  qemu_pid=$!
  local qrc=0
  wait "$qemu_pid" || qrc=$?
  qemu_pid=
  [ -f "$ctl/stdout" ] && cat "$ctl/stdout"
  [ -f "$ctl/stderr" ] && cat "$ctl/stderr" >&2
  if [ -f "$ctl/status" ]; then
    return "$(cat "$ctl/status")"
  fi
  if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    say "the guest ran out of its ${secs} s"
    return 124
  fi
  say "the guest reported no exit status (qemu exited $qrc)"
  cat "$dir/qemu.log" >&2
  tail -n 40 "$dir/console" >&2
  return 125
}

case ${1:-} in
  setup) setup ;;
  run) shift; status=0; run "$@" || status=$?; exit "$status" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
