#!/usr/bin/env bash
# A throw-away single-node Ceph cluster for fiox's tests: one monitor and one OSD (memstore, so
# nothing but RAM), auth none, listening on 127.0.0.1 only, with a pool `bench` ready for RBD.
# Needs Debian's ceph-mon, ceph-osd and ceph-common (pacific on bookworm):
#   apt-get install -y -qq --no-install-recommends ceph-mon ceph-osd ceph-common
#
#   scripts/ceph-cluster.sh up DIR [--until PID]   start a cluster whose files all live in DIR
#                                                  (DIR must be missing or empty); prints
#                                                  "READY DIR/ceph.conf" when a client can write.
#                                                  With --until, the cluster is stopped and DIR
#                                                  removed once process PID has exited.
#   scripts/ceph-cluster.sh rgw DIR                add a RADOS Gateway to DIR's running cluster
#                                                  (Debian's radosgw): beast on 127.0.0.1, an S3
#                                                  user and a Swift subuser; prints
#                                                  "RGW http://127.0.0.1:PORT" once it answers.
#   scripts/ceph-cluster.sh down DIR               stop the daemons by the PIDs recorded in DIR
#
# The monitor's ports come from FIOX_CEPH_MON_PORT (v2; v1 is the next port, default 13300),
# the OSD's from 17000-17100; memstore's capacity from FIOX_CEPH_MEMSTORE_BYTES (default 2 GiB:
# a full memstore OSD blocks its clients forever, so tests keep their data small).
# The gateway's port comes from FIOX_CEPH_RGW_PORT (default 13380); its user is `fiox`, with the
# S3 keys FIOX_CEPH_RGW_KEY and FIOX_CEPH_RGW_SECRET and the Swift subuser `fiox:swift` whose key
# is FIOX_CEPH_RGW_SWIFT_KEY (defaults below: a throw-away cluster on loopback).
set -euo pipefail

usage() { echo "usage: $0 up DIR [--until PID] | rgw DIR | down DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2
shift 2
marker=.fiox-ceph-cluster

# Stops every daemon whose PID file is in DIR/run and waits (bounded) until they are gone. Only
# PIDs this script recorded are signalled, and only while they still run a Ceph daemon.
down() {
  local d=$1 pidfile pid pids=() i
  [ -e "$d/$marker" ] || { echo "$0: $d is not a cluster made by this script" >&2; return 1; }
  for pidfile in "$d"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    case "$(cat /proc/"$pid"/comm 2>/dev/null)" in
      ceph-mon|ceph-osd|radosgw) kill "$pid" 2>/dev/null && pids+=("$pid") ;;
    esac
  done
  for i in $(seq 1 100); do
    local alive=0
    for pid in "${pids[@]}"; do [ -d /proc/"$pid" ] && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.2
  done
  # Still there after 20 s: no more patience (memstore has nothing to flush).
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

up() {
  local d=$1 until=${2:-}
  for tool in ceph-mon ceph-osd ceph monmaptool rados rbd uuidgen; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is missing (apt-get install ceph-mon ceph-osd ceph-common)" >&2; exit 1; }
  done
  mkdir -p "$d"
  [ -z "$(ls -A "$d")" ] || { echo "$0: $d is not empty" >&2; exit 1; }
  d=$(cd "$d" && pwd)
  touch "$d/$marker"
  mkdir -p "$d/mon.a" "$d/osd.0" "$d/run" "$d/log"
  local port=${FIOX_CEPH_MON_PORT:-13300} fsid osd_uuid conf=$d/ceph.conf
  local mons="[v2:127.0.0.1:$port,v1:127.0.0.1:$((port + 1))]"
  fsid=$(uuidgen)
  # Everything a daemon or a client needs is in this one file: the tests point CEPH_CONF (and
  # fio's rados engine's conf=) at it, so nothing in /etc/ceph is read or written.
  cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = $mons
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
public network = 127.0.0.0/8
ms bind port min = 17000
ms bind port max = 17100
run dir = $d/run
pid file = $d/run/\$name.pid
log file = $d/log/\$name.log
admin socket = $d/run/\$name.asok
mon data = $d/mon.\$id
osd data = $d/osd.\$id
osd objectstore = memstore
memstore device bytes = ${FIOX_CEPH_MEMSTORE_BYTES:-2147483648}
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
osd op num shards = 1
osd op num threads per shard = 2
# A client that cannot reach the monitors gives up after 10 s instead of 300 s.
client mount timeout = 10
[client]
rbd cache = false
# One admin socket per client process: concurrent clients would fight over client.admin.asok.
admin socket = $d/run/\$name.\$pid.asok
EOF
  local c=(-c "$conf")
  monmaptool --create --fsid "$fsid" --addv a "$mons" "$d/monmap" >/dev/null
  ceph-mon "${c[@]}" --mkfs -i a --monmap "$d/monmap" 2>>"$d/log/mkfs.err"
  ceph-mon "${c[@]}" -i a 2>>"$d/log/start.err"
  ceph "${c[@]}" --connect-timeout 30 mon stat >/dev/null
  # The OSD's mkfs must use the UUID the monitor handed out, or the monitor ignores its boot.
  osd_uuid=$(uuidgen)
  ceph "${c[@]}" osd new "$osd_uuid" >/dev/null
  ceph-osd "${c[@]}" -i 0 --mkfs --osd-uuid "$osd_uuid" 2>>"$d/log/mkfs.err"
  ceph-osd "${c[@]}" -i 0 2>>"$d/log/start.err"
  if [ -n "$until" ]; then
    # Detached from the caller's session and output, so that the caller's end (even a kill)
    # is what stops the cluster, and nothing waits for this watcher's output.
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2" down "$3"; rm -rf "$3"' \
      watcher "$until" "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$d" </dev/null >/dev/null 2>&1 &
  fi
  local i
  for i in $(seq 1 120); do
    ceph "${c[@]}" osd stat 2>/dev/null | grep -q ' 1 up' && break
    sleep 0.5
  done
  ceph "${c[@]}" osd pool create bench 32 32 >/dev/null 2>&1
  ceph "${c[@]}" osd pool application enable bench rbd >/dev/null 2>&1
  # Ready when a client can write an object (`ceph -s` needs a manager this cluster has not).
  for i in $(seq 1 120); do
    timeout -k 2 5 rados "${c[@]}" -p bench put fiox-ready "$conf" 2>/dev/null && break
    sleep 0.5
  done
  rados "${c[@]}" -p bench rm fiox-ready
  rbd "${c[@]}" pool init bench
  echo "READY $conf"
}

# A radosgw (client.rgw.a) on the cluster in DIR: its pools are small (the monitor's limit of
# placement groups per OSD would otherwise refuse the gateway's seven pools beside `bench`), its
# beast front end listens on loopback only, and its PID file is in DIR/run, so `down` stops it.
rgw() {
  local d=$1 port=${FIOX_CEPH_RGW_PORT:-13380} i
  [ -e "$d/$marker" ] || { echo "$0: $d is not a cluster made by this script" >&2; return 1; }
  command -v radosgw >/dev/null && command -v radosgw-admin >/dev/null \
    || { echo "$0: radosgw is missing (apt-get install --no-install-recommends radosgw)" >&2; exit 1; }
  d=$(cd "$d" && pwd)
  local c=(-c "$d/ceph.conf")
  ceph "${c[@]}" config set mon mon_max_pg_per_osd 1000 >/dev/null
  ceph "${c[@]}" config set global osd_pool_default_pg_num 8 >/dev/null
  ceph "${c[@]}" config set global osd_pool_default_pgp_num 8 >/dev/null
  mkdir -p "$d/rgw.a"
  # radosgw goes to the background by itself (before it answers); its PID file is run/client.rgw.a.pid.
  # Under `auth ... = none` its monitor session needs the crc mode, or it cannot fetch its
  # configuration from the monitor.
  radosgw "${c[@]}" -n client.rgw.a --rgw-data "$d/rgw.a" --ms-mon-client-mode crc \
    --rgw-frontends "beast endpoint=127.0.0.1:$port" 2>>"$d/log/start.err" \
    || { echo "$0: radosgw did not start: $(tail -1 "$d/log/start.err")" >&2; exit 1; }
  # Ready when it answers HTTP (it has made its pools and zone by then); the user is made after
  # that, so radosgw-admin does not race the gateway to create the default zone.
  local answered=0
  for i in $(seq 1 120); do
    timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && head -1 <&3" 2>/dev/null \
      | grep -q '^HTTP/' && { answered=1; break; }
    sleep 0.5
  done
  if [ $answered = 1 ]; then
    radosgw-admin "${c[@]}" user create --uid fiox --display-name fiox \
      --access-key "${FIOX_CEPH_RGW_KEY:-fioxrgwkey}" --secret-key "${FIOX_CEPH_RGW_SECRET:-fioxrgwsecret}" >/dev/null
    radosgw-admin "${c[@]}" subuser create --uid fiox --subuser fiox:swift --access full \
      --secret "${FIOX_CEPH_RGW_SWIFT_KEY:-fioxswiftsecret}" >/dev/null
    echo "RGW http://127.0.0.1:$port"
    return 0
  fi
  echo "$0: radosgw did not answer on 127.0.0.1:$port within 60 s (log: $d/log/client.rgw.a.log)" >&2
  return 1
}

case $cmd in
  rgw) rgw "$dir" ;;
  up)
    until=
    if [ $# -gt 0 ]; then
      [ "$1" = --until ] && [ $# = 2 ] || usage
      until=$2
    fi
    up "$dir" "$until"
    ;;
  down) down "$dir" ;;
  *) usage ;;
esac
