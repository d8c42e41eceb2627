#!/bin/bash
# Regenerates the golden verify blocks with fio 3.33 (/usr/bin/fio). Run from this directory.
# Each file is what one write job left: no read-back (do_verify=0), so the blocks are fio's own.
set -eu
fio=${FIO:-/usr/bin/fio}
w() { # name, options...
    local name=$1; shift
    rm -f "$name"
    "$fio" --name=g --filename="$name" --rw=write --do_verify=0 --output=/dev/null "$@"
}
for k in md5 crc64 crc32 crc32c crc32c-intel crc16 crc7 sha256 sha512 sha3-224 sha3-256 sha3-384 sha3-512 xxhash sha1 meta null; do
    w "$k.bs4k" --size=8k --bs=4k --verify=$k
    w "$k.vi512vo64" --size=4k --bs=4k --verify=$k --verify_interval=512 --verify_offset=64
done
# Odd lengths: sha256 and sha512 keep partial blocks in their contexts.
w sha256.bs1000 --size=3000 --bs=1000 --verify=sha256
w sha256.bs228 --size=456 --bs=228 --verify=sha256
w sha512.bs1000 --size=3000 --bs=1000 --verify=sha512
w sha512.vi200 --size=2000 --bs=1000 --verify=sha512 --verify_interval=200
# Patterns: with verify=pattern (type 18), alone (type 17), with meta, with a checksum.
i=0
for p in 0xdeadbeef %o '"abcd"-120xdeadface'; do
    w "pat$i.pattern" --size=8k --bs=4k --verify=pattern --verify_pattern="$p" --verify_interval=1000 --offset=3000
    w "pat$i.hdr" --size=8k --bs=4k --verify_pattern="$p" --verify_interval=512
    w "pat$i.hdrvo" --size=4k --bs=4k --verify_pattern="$p" --verify_interval=512 --verify_offset=100
    w "pat$i.meta" --size=4k --bs=4k --verify=meta --verify_pattern="$p" --verify_interval=1024
    w "pat$i.md5" --size=4k --bs=4k --verify=md5 --verify_pattern="$p"
    i=$((i + 1))
done
