//! `zonemode=zbd` against fio 3.33, in one guest with an emulated NVMe ZNS namespace
//! (/dev/nvme0n1: 16 zones of 16 MiB, no open-zone limit) and a zoned null_blk device
//! (/dev/nullb0: 2 conventional zones, then sequential zones of 16 MiB with a capacity of
//! 12 MiB, at most 4 open). Each run starts from a known zone state (reset, or filled by fio),
//! made again before each tool. A second guest adds trims, `zoneskip`, the zone options'
//! refusals and zoned SCSI disks (scsi_debug, host-managed then host-aware, 3 conventional
//! zones), and compares the zone report each run leaves.

use super::guest::{available, Batch, Results, Tool};

const ZNS: &str = "/dev/nvme0n1";
const NULLB: &str = "/dev/nullb0";
/// The runs of a write job and a trim job sharing zones.
const SHARED: [&str; 3] = ["nullb-write-trim-1", "nullb-write-trim-2", "nullb-write-trim-3"];

/// The zone resets a run's normal output reports, per job.
fn resets(r: &Results, name: &str, tool: Tool) -> Vec<u64> {
    let out = r.out(name, tool);
    out.stdout.lines().filter_map(|l| l.split("; ").nth(1)?.strip_suffix(" zone resets")?.parse().ok()).collect()
}

/// Bytes and I/O counts (from the normal output's `issued rwts` lines) and exit status.
fn issued(r: &Results, name: &str, tool: Tool) -> (i32, Vec<String>) {
    let out = r.out(name, tool);
    let lines = out.stdout.lines().filter(|l| l.contains("issued rwts:")).map(|l| l.trim().to_string()).collect();
    (out.code, lines)
}

/// Every write of a run's iolog goes to its zone's write pointer: per zone, each write starts
/// where the last ended (or at the zone's start, after a reset).
/// Zones below `conv_end` are conventional (written anywhere).
fn writes_at_write_pointer(r: &Results, name: &str, tool: Tool, zone: u64, conv_end: u64) {
    let mut wp = std::collections::HashMap::new();
    for (_, act, off, len) in r.iolog(name, tool) {
        if act != "write" || off < conv_end {
            continue;
        }
        let z = off / zone;
        let at = wp.entry(z).or_insert(off);
        assert!(off == *at || off == z * zone, "{name}: write at {off} in zone {z}, whose write pointer is {at}");
        *at = off + len;
    }
}

#[test]
fn zoned_block_devices_match_fio() {
    if !available() {
        return;
    }
    let mut b = Batch::new("nvme-zns");
    let reset = format!("blkzone reset {ZNS}");
    let fill = format!(
        "{reset}; fio --name=f --filename={ZNS} --direct=1 --zonemode=zbd --rw=write --bs=1M --size=64M >/dev/null"
    );
    // Zone 0 full, zone 1 half written.
    let partial = format!("{reset}; fio --name=p --filename={ZNS} --direct=1 --zonemode=zbd --rw=write --bs=64k --size=24M --offset=0 >/dev/null; fio --name=p --filename={ZNS} --direct=1 --zonemode=zbd --rw=write --bs=64k --offset=16M --size=16M --io_size=8M >/dev/null");
    let z = ["--filename=/dev/nvme0n1", "--direct=1", "--zonemode=zbd", "--output-format=normal,json"];
    // (name, state before, options, whether fio's offsets are repeatable here: sequential
    // jobs; random ones draw from fio's generator, which fiox's is not).
    let cases: &[(&str, &str, &[&str], bool)] = &[
        ("seq-write-fill", &reset, &["--name=z", "--rw=write", "--bs=64k", "--size=64M"], true),
        ("seq-write-over-full-zones", &fill, &["--name=z", "--rw=write", "--bs=64k", "--size=64M"], true),
        (
            "randwrite-max-open-zones",
            &reset,
            &[
                "--name=r",
                "--rw=randwrite",
                "--bs=4k",
                "--size=32M",
                "--max_open_zones=4",
                "--ioengine=libaio",
                "--iodepth=4",
            ],
            false,
        ),
        (
            "randwrite-over-full-zones",
            &fill,
            &["--name=r", "--rw=randwrite", "--bs=4k", "--size=32M", "--max_open_zones=2"],
            false,
        ),
        ("read-below-wp", &partial, &["--name=z", "--rw=read", "--bs=64k", "--size=64M"], true),
        ("read-beyond-wp", &partial, &["--name=z", "--rw=read", "--bs=64k", "--size=64M", "--read_beyond_wp=1"], true),
        ("randread-below-wp", &partial, &["--name=z", "--rw=randread", "--bs=4k", "--size=64M"], false),
        ("verify", &fill, &["--name=v", "--rw=write", "--bs=4k", "--size=32M", "--verify=crc32c"], true),
        (
            "verify-random",
            &fill,
            &["--name=v", "--rw=randwrite", "--bs=4k", "--size=32M", "--verify=md5", "--max_open_zones=2"],
            false,
        ),
        ("rounded-region", &reset, &["--name=e", "--rw=write", "--bs=64k", "--offset=1M", "--size=40M"], true),
        // Each loop finds the zones full and resets them.
        ("seq-write-loops", &reset, &["--name=l", "--rw=write", "--bs=1M", "--size=32M", "--loops=3"], true),
        (
            "verify-numjobs",
            &fill,
            &[
                "--name=v",
                "--rw=write",
                "--bs=64k",
                "--size=32M",
                "--numjobs=2",
                "--offset_increment=64M",
                "--verify=crc32c",
                "--group_reporting",
            ],
            false,
        ),
        (
            "libaio-verify-max-open-zones",
            &fill,
            &[
                "--name=v",
                "--rw=randwrite",
                "--bs=4k",
                "--size=64M",
                "--io_size=8M",
                "--ioengine=libaio",
                "--iodepth=4",
                "--verify=crc32c",
                "--max_open_zones=2",
            ],
            false,
        ),
        (
            "io_uring-depth-8",
            &fill,
            &["--name=u", "--rw=write", "--bs=64k", "--size=64M", "--ioengine=io_uring", "--iodepth=8"],
            true,
        ),
        (
            "two-jobs",
            &fill,
            &[
                "--rw=write",
                "--bs=64k",
                "--name=a",
                "--offset=0",
                "--size=32M",
                "--name=b",
                "--offset=128M",
                "--size=32M",
            ],
            false,
        ),
        (
            "numjobs-share-zones",
            &fill,
            &[
                "--name=n",
                "--rw=randwrite",
                "--bs=4k",
                "--size=64M",
                "--io_size=8M",
                "--numjobs=2",
                "--max_open_zones=4",
                "--group_reporting",
            ],
            false,
        ),
        (
            "reset-threshold",
            &fill,
            &[
                "--name=t",
                "--rw=randwrite",
                "--bs=64k",
                "--size=64M",
                "--io_size=32M",
                "--zone_reset_threshold=0.1",
                "--zone_reset_frequency=0.5",
            ],
            false,
        ),
    ];
    for (name, before, opts, _) in cases {
        b.both(name, before, &[&z[..], opts].concat());
    }
    let bad: &[(&str, &[&str])] = &[
        ("bad-zonesize", &["--name=e", "--rw=write", "--bs=64k", "--size=64M", "--zonesize=8M"]),
        ("bad-job-max-open", &["--name=e", "--rw=randwrite", "--bs=4k", "--size=16M", "--job_max_open_zones=3"]),
    ];
    for (name, opts) in bad {
        b.both(name, "", &[&z[..], opts].concat());
    }
    // A zoned null_blk: conventional zones first, capacity below the zone size, 4 open at most.
    b.shell("modprobe null_blk nr_devices=1 zoned=1 zone_size=16 zone_capacity=12 zone_nr_conv=2 zone_max_open=4 zone_max_active=6 gb=1 memory_backed=1");
    let rn = format!("blkzone reset {NULLB}");
    let n = ["--filename=/dev/nullb0", "--direct=1", "--zonemode=zbd", "--output-format=normal,json"];
    let cap: &[(&str, &str, &[&str], bool)] = &[
        ("capacity-seq-write", &rn, &["--name=c", "--rw=write", "--bs=64k", "--size=128M"], true),
        ("capacity-seq-write-again", "", &["--name=c", "--rw=write", "--bs=64k", "--size=128M"], true),
        ("capacity-read", "", &["--name=c", "--rw=read", "--bs=64k", "--size=128M"], true),
        // A pass ends at the region's end, early (12 of each 16 MiB written): each loop
        // writes 48 MiB and, from the second on, resets the 4 zones first.
        (
            "capacity-loops",
            &rn,
            &["--name=l", "--rw=write", "--bs=64k", "--offset=32M", "--size=64M", "--loops=4"],
            true,
        ),
        (
            "capacity-read-loops",
            "",
            &["--name=l", "--rw=read", "--bs=64k", "--offset=32M", "--size=64M", "--loops=2"],
            true,
        ),
        ("capacity-randwrite", &rn, &["--name=c", "--rw=randwrite", "--bs=4k", "--size=128M", "--io_size=16M"], false),
        (
            "capacity-verify",
            &rn,
            &[
                "--name=c",
                "--rw=randwrite",
                "--bs=4k",
                "--size=96M",
                "--io_size=8M",
                "--verify=crc32c",
                "--max_open_zones=3",
            ],
            false,
        ),
    ];
    for (name, before, opts, _) in cap {
        b.both(name, before, &[&n[..], opts].concat());
    }
    b.both(
        "bad-max-open",
        "",
        &[&n[..], &["--name=c", "--rw=randwrite", "--bs=4k", "--size=128M", "--io_size=16M", "--max_open_zones=8"]]
            .concat(),
    );
    let r = b.boot();

    for (name, _, _, ordered) in cases.iter().chain(cap) {
        let (fc, fi) = issued(&r, name, Tool::Fio);
        let (xc, xi) = issued(&r, name, Tool::Fiox);
        assert_eq!((fc, xc), (0, 0), "{name}: exit status fio {fc}, fiox {xc}: {}", r.out(name, Tool::Fiox).stderr);
        assert_eq!(fi, xi, "{name}: issued I/Os");
        let (fb, xb) = (r.totals(name, Tool::Fio), r.totals(name, Tool::Fiox));
        assert_eq!(fb, xb, "{name}: bytes, I/O counts and errors (fio, fiox)");
        if *ordered {
            r.same(name, true);
        }
        if !["two-jobs", "numjobs-share-zones", "verify-numjobs"].contains(name) {
            // (Several jobs' logs interleave in one file.)
            let conv_end = if name.starts_with("capacity") { 32 << 20 } else { 0 };
            writes_at_write_pointer(&r, name, Tool::Fiox, 16 << 20, conv_end);
        }
        let (fr, xr) = (resets(&r, name, Tool::Fio), resets(&r, name, Tool::Fiox));
        if *name == "reset-threshold" {
            // Which zones fill depends on the random offsets: both reset periodically.
            assert!(fr.iter().sum::<u64>() > 4 && xr.iter().sum::<u64>() > 4, "{name}: resets fio {fr:?}, fiox {xr:?}");
        } else {
            assert_eq!(fr, xr, "{name}: zone resets");
        }
        eprintln!("{name}: fio and fiox: {fb:?}, zone resets {fr:?}");
    }
    // fio's notes about the region rounded to whole zones, on standard output.
    let notes = |t| {
        let o = r.out("rounded-region", t).stdout;
        o.lines().filter(|l| l.contains(": rounded ")).map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(notes(Tool::Fio), notes(Tool::Fiox));
    assert_eq!(notes(Tool::Fiox).len(), 2);
    // fio 3.33's figures for the loops over zones of 12 MiB capacity.
    assert_eq!(r.totals("capacity-loops", Tool::Fiox).0[1], 192 << 20);
    assert_eq!(resets(&r, "capacity-loops", Tool::Fiox), [12]);
    // Refusals: both fail before any I/O, with fio's words.
    for (name, words) in [
        ("bad-zonesize", "/dev/nvme0n1 job parameter zonesize 8388608 does not match disk zone size 16777216."),
        ("bad-job-max-open", "'job_max_open_zones' cannot be used without a global open zones limit"),
        ("bad-max-open", "Specified --max_open_zones (8) is larger than max (4)"),
    ] {
        let (f, x) = (r.out(name, Tool::Fio), r.out(name, Tool::Fiox));
        assert!(f.code != 0 && x.code != 0, "{name}: fio {}, fiox {}", f.code, x.code);
        assert!(f.stderr.contains(words), "{name}: fio said {}", f.stderr);
        assert!(x.stderr.contains(words), "{name}: fiox said {}", x.stderr);
        assert!(r.iolog(name, Tool::Fiox).is_empty(), "{name}: fiox did I/O");
    }
}

/// A zone report as `start wptr condition` lines (what the jobs left on the device).
fn report(dev: &str) -> String {
    format!(r"blkzone report {dev} | sed -E 's/.*start: ([0-9a-fx]+).*wptr ([0-9a-fx]+).*zcond: ?([0-9]+).*/\1 \2 \3/'")
}

/// Keys of a JSON value and everything under it, but for the options the job was given.
fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m.iter().filter(|(k, _)| !k.ends_with(" options")) {
                out.push(k.clone());
                keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// How a run's I/Os are compared: in order, as a set, by count only (several jobs' logs
/// interleave in one file), or by count only with neither resets nor zones compared (random
/// offsets: which zones fill, and so reset, is the draw's).
#[derive(Clone, Copy, PartialEq)]
enum Ios {
    Ordered,
    Set,
    Counted,
    Random,
}

/// Asserts that fio and fiox ran `name` alike: exit status 0, issued I/Os, bytes and I/O counts
/// per direction, zone resets, the logged I/Os as `ios` says, the zone report left behind (when
/// kept), and no JSON key about zones (fio 3.33 prints none).
fn alike(r: &Results, name: &str, ios: Ios) {
    let (fc, fi) = issued(r, name, Tool::Fio);
    let (xc, xi) = issued(r, name, Tool::Fiox);
    assert_eq!((fc, xc), (0, 0), "{name}: exit status fio {fc}, fiox {xc}: {}", r.out(name, Tool::Fiox).stderr);
    assert_eq!(fi, xi, "{name}: issued I/Os");
    let (fb, xb) = (r.totals(name, Tool::Fio), r.totals(name, Tool::Fiox));
    assert_eq!(fb, xb, "{name}: bytes, I/O counts and errors (fio, fiox)");
    match ios {
        Ios::Ordered => {
            r.same(name, true);
        }
        Ios::Set => {
            r.same(name, false);
        }
        Ios::Counted | Ios::Random => {}
    }
    let (fr, xr) = (resets(r, name, Tool::Fio), resets(r, name, Tool::Fiox));
    let (fz, xz) = (r.saved(name, Tool::Fio, "zones"), r.saved(name, Tool::Fiox, "zones"));
    if ios != Ios::Random {
        assert_eq!(fr, xr, "{name}: zone resets");
        assert_eq!(fz, xz, "{name}: zones after the run (start, write pointer, condition)");
    }
    let notes =
        |t| r.out(name, t).stdout.lines().filter(|l| l.contains(": rounded ")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(notes(Tool::Fio), notes(Tool::Fiox), "{name}: rounding notes");
    for t in [Tool::Fio, Tool::Fiox] {
        let mut k = Vec::new();
        keys(&r.json(name, t), &mut k);
        assert!(!k.iter().any(|k| k.contains("zone")), "{name}: a JSON key about zones: {k:?}");
    }
    eprintln!("{name}: fio and fiox: {fb:?}, zone resets {fr:?}, {} zone lines alike", fz.lines().count());
}

/// Asserts that both refused `name` before any I/O, with fio's `words` (fio prints some of its
/// refusals on standard output).
fn refused(r: &Results, name: &str, words: &str) {
    let (f, x) = (r.out(name, Tool::Fio), r.out(name, Tool::Fiox));
    assert!(f.code != 0 && x.code != 0, "{name}: fio {}, fiox {}", f.code, x.code);
    assert!(f.stdout.contains(words) || f.stderr.contains(words), "{name}: fio said {}{}", f.stdout, f.stderr);
    assert!(x.stderr.contains(words), "{name}: fiox said {}", x.stderr);
    assert!(r.iolog(name, Tool::Fiox).is_empty(), "{name}: fiox did I/O");
    eprintln!("{name}: both refused: {words}");
}

/// Trims (a trim of a whole sequential zone is a zone reset in fio), `zoneskip`, the zone
/// options' refusals, and fio's model of zoned SCSI disks (scsi_debug): host-managed with
/// conventional zones, and host-aware, whose sequential-write-preferred zones fio 3.33 writes
/// anywhere (no write pointer, no reset), with buffered writes allowed.
#[test]
fn zoned_trims_skips_and_scsi_match_fio() {
    if !available() {
        return;
    }
    let mut b = Batch::new("nvme-zns");
    let fill = format!(
        "blkzone reset {ZNS}; fio --name=f --filename={ZNS} --direct=1 --zonemode=zbd --rw=write --bs=1M --size=64M >/dev/null"
    );
    let reset = format!("blkzone reset {ZNS}");
    let z = ["--filename=/dev/nvme0n1", "--direct=1", "--zonemode=zbd", "--output-format=normal,json"];
    // (name, state before, options, how the I/Os compare); each leaves its zone report.
    let zns: &[(&str, &str, &[&str], Ios)] = &[
        ("trim-seq", &fill, &["--name=t", "--rw=trim", "--bs=16M", "--size=128M"], Ios::Ordered),
        ("trim-random", &fill, &["--name=t", "--rw=randtrim", "--bs=16M", "--size=256M"], Ios::Set),
        ("trimwrite", &fill, &["--name=t", "--rw=trimwrite", "--bs=16M", "--size=64M"], Ios::Ordered),
        ("trim-rounded", &fill, &["--name=t", "--rw=trim", "--bs=16M", "--offset=1M", "--size=64M"], Ios::Ordered),
        (
            "zoneskip",
            &fill,
            &["--name=s", "--rw=write", "--bs=1M", "--size=64M", "--io_size=32M", "--zoneskip=16M", "--zonesize=16M"],
            Ios::Ordered,
        ),
        (
            "zoneskip-wrap",
            &reset,
            &["--name=s", "--rw=write", "--bs=4M", "--io_size=192M", "--zoneskip=16M", "--zonerange=32M"],
            Ios::Ordered,
        ),
        // Zones 0, 2, .., 14 hold data: a read skips from zone 0 to zone 3, empty, so reads
        // zone 4, then goes on from zone 3 (not 4) to zone 6, then 9, on to 10.
        (
            "zoneskip-read",
            "",
            &["--name=s", "--rw=read", "--bs=1M", "--size=256M", "--io_size=64M", "--zoneskip=32M"],
            Ios::Ordered,
        ),
    ];
    for (name, before, opts, _) in zns {
        for t in [Tool::Fio, Tool::Fiox] {
            b.run(name, t, before, &[&z[..], opts].concat()).save(name, t, "zones", &report(ZNS));
        }
    }
    let bad: &[(&str, &[&str])] = &[
        ("bad-trim-bs", &["--name=e", "--rw=trim", "--bs=1M", "--size=64M"]),
        ("bad-trim-bsrange", &["--name=e", "--rw=trim", "--bsrange=1M-16M", "--size=64M"]),
        ("bad-verify-bs", &["--name=e", "--rw=write", "--bs=48k", "--size=64M", "--verify=crc32c"]),
        ("bad-zoneskip", &["--name=e", "--rw=write", "--bs=1M", "--size=64M", "--zoneskip=8M"]),
        ("bad-buffered", &["--name=e", "--rw=write", "--bs=1M", "--size=64M", "--direct=0"]),
    ];
    for (name, opts) in bad {
        b.both(name, "", &[&z[..], opts].concat());
    }
    // Zoned null_blk: 2 conventional zones, capacity 12 of 16 MiB, at most 4 open.
    b.shell("modprobe null_blk nr_devices=1 zoned=1 zone_size=16 zone_capacity=12 zone_nr_conv=2 zone_max_open=4 zone_max_active=6 gb=1 memory_backed=1");
    let nfill = format!("blkzone reset {NULLB}; fio --name=f --filename={NULLB} --direct=1 --zonemode=zbd --rw=write --bs=1M --size=128M >/dev/null");
    let nreset = format!("blkzone reset {NULLB}");
    let n = ["--filename=/dev/nullb0", "--direct=1", "--zonemode=zbd", "--output-format=normal,json"];
    let nb: &[(&str, &str, &[&str], Ios)] = &[
        ("nullb-trim", &nfill, &["--name=t", "--rw=trim", "--bs=16M", "--offset=32M", "--size=96M"], Ios::Ordered),
        (
            "nullb-ignore-limits",
            &nreset,
            &["--name=i", "--rw=write", "--bs=1M", "--size=128M", "--max_open_zones=8", "--ignore_zone_limits=1"],
            Ios::Ordered,
        ),
        (
            "nullb-job-max-open",
            &nreset,
            &[
                "--name=j",
                "--rw=randwrite",
                "--bs=4k",
                "--size=256M",
                "--io_size=8M",
                "--numjobs=2",
                "--job_max_open_zones=2",
                "--group_reporting",
            ],
            Ios::Random,
        ),
        (
            "nullb-jobs-one-open-each",
            &nreset,
            &[
                "--rw=write",
                "--bs=64k",
                "--job_max_open_zones=1",
                "--name=a",
                "--offset=32M",
                "--size=64M",
                "--name=b",
                "--offset=96M",
                "--size=64M",
            ],
            Ios::Counted,
        ),
    ];
    for (name, before, opts, _) in nb {
        for t in [Tool::Fio, Tool::Fiox] {
            b.run(name, t, before, &[&n[..], opts].concat()).save(name, t, "zones", &report(NULLB));
        }
    }
    // A trim of a conventional zone is a discard, which this null_blk does not do: EOPNOTSUPP.
    b.both("nullb-trim-conventional", &nfill, &[&n[..], &["--name=t", "--rw=trim", "--bs=16M", "--size=32M"]].concat());
    // A job writing full zones (each reset first) while another trims them: a trim's reset
    // waits for the write in flight to its zone. Run thrice, as a reset under a write in
    // flight shows only some of the time.
    let shared = [
        "--name=w",
        "--rw=write",
        "--bs=256k",
        "--offset=32M",
        "--size=64M",
        "--ioengine=libaio",
        "--iodepth=4",
        "--name=t",
        "--rw=randtrim",
        "--bs=16M",
        "--offset=32M",
        "--size=64M",
        "--number_ios=8",
    ];
    for name in SHARED {
        b.both(name, &nfill, &[&n[..], &shared].concat());
    }
    // Zoned SCSI disks (scsi_debug, 8 MiB zones, 3 conventional, discard on): host-managed.
    let sd = "/dev/sda";
    b.shell("modprobe scsi_debug zbc=managed zone_size_mb=8 dev_size_mb=128 zone_nr_conv=3 delay=0 lbpu=1 && guest-coldplug && sleep 1");
    let s = ["--filename=/dev/sda", "--direct=1", "--zonemode=zbd", "--output-format=normal,json"];
    let sreset = format!("blkzone reset {sd}");
    let sfill = format!(
        "{sreset}; fio --name=f --filename={sd} --direct=1 --zonemode=zbd --rw=write --bs=1M --size=64M >/dev/null"
    );
    let managed: &[(&str, &str, &[&str], Ios)] = &[
        ("scsi-managed-write", &sreset, &["--name=m", "--rw=write", "--bs=64k", "--size=64M"], Ios::Ordered),
        ("scsi-managed-read", "", &["--name=m", "--rw=read", "--bs=64k", "--size=128M"], Ios::Ordered),
        (
            "scsi-managed-randwrite",
            &sfill,
            &["--name=m", "--rw=randwrite", "--bs=4k", "--size=128M", "--io_size=8M"],
            Ios::Random,
        ),
        ("scsi-managed-trim", &sfill, &["--name=m", "--rw=trim", "--bs=8M", "--size=64M"], Ios::Ordered),
    ];
    for (name, before, opts, _) in managed {
        for t in [Tool::Fio, Tool::Fiox] {
            b.run(name, t, before, &[&s[..], opts].concat()).save(name, t, "zones", &report(sd));
        }
    }
    b.both(
        "scsi-managed-buffered",
        "",
        &[&s[..], &["--name=e", "--rw=write", "--bs=64k", "--size=64M", "--direct=0"]].concat(),
    );
    b.both(
        "scsi-managed-max-open",
        "",
        &[&s[..], &["--name=e", "--rw=randwrite", "--bs=4k", "--size=64M", "--max_open_zones=16"]].concat(),
    );
    // Host-aware: the same disk with sequential-write-preferred zones.
    b.shell("rmmod scsi_debug; modprobe scsi_debug zbc=aware zone_size_mb=8 dev_size_mb=128 zone_nr_conv=3 delay=0 lbpu=1 && guest-coldplug && sleep 1");
    let aware: &[(&str, &str, &[&str], Ios)] = &[
        (
            "scsi-aware-write",
            &sreset,
            &["--name=a", "--rw=write", "--bs=64k", "--offset=1M", "--size=40M"],
            Ios::Ordered,
        ),
        (
            "scsi-aware-overwrite",
            "",
            &["--name=a", "--rw=write", "--bs=64k", "--offset=1M", "--size=40M"],
            Ios::Ordered,
        ),
        ("scsi-aware-read", "", &["--name=a", "--rw=read", "--bs=64k", "--size=128M"], Ios::Ordered),
        (
            "scsi-aware-randwrite",
            &sreset,
            &["--name=a", "--rw=randwrite", "--bs=4k", "--size=128M", "--io_size=8M", "--max_open_zones=4"],
            Ios::Random,
        ),
        (
            "scsi-aware-buffered",
            &sreset,
            &["--name=a", "--rw=write", "--bs=64k", "--size=64M", "--direct=0"],
            Ios::Ordered,
        ),
        ("scsi-aware-trim", "", &["--name=a", "--rw=trim", "--bs=8M", "--size=128M"], Ios::Ordered),
    ];
    for (name, before, opts, _) in aware {
        for t in [Tool::Fio, Tool::Fiox] {
            b.run(name, t, before, &[&s[..], opts].concat()).save(name, t, "zones", &report(sd));
        }
    }
    let r = b.boot();

    // Every case is checked, and every difference reported at once.
    let failed: Vec<String> = zns
        .iter()
        .chain(nb)
        .chain(managed)
        .chain(aware)
        .filter_map(|(name, _, _, ios)| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| alike(&r, name, *ios))).err().map(|e| {
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            })
        })
        .collect();
    assert!(failed.is_empty(), "{} cases differ:\n{}", failed.len(), failed.join("\n"));
    // A host-aware device's zones have no write pointer for fio: random writes reset none.
    for t in [Tool::Fio, Tool::Fiox] {
        assert_eq!(resets(&r, "scsi-aware-randwrite", t), [0], "scsi-aware-randwrite: resets");
    }
    // The conventional zone's trim fails alike: one trim issued, error 95 (EOPNOTSUPP).
    let (f, x) = (r.out("nullb-trim-conventional", Tool::Fio), r.out("nullb-trim-conventional", Tool::Fiox));
    assert!(f.code != 0 && x.code != 0, "nullb-trim-conventional: fio {}, fiox {}", f.code, x.code);
    assert!(
        f.stdout.contains("err=95") && x.stdout.contains("err=95"),
        "nullb-trim-conventional: {}\n{}",
        f.stdout,
        x.stdout
    );
    assert_eq!(issued(&r, "nullb-trim-conventional", Tool::Fio).1, issued(&r, "nullb-trim-conventional", Tool::Fiox).1);
    // fio reports it as its queueing step's error, with no io_u error line.
    assert_eq!(
        r.outcome("nullb-trim-conventional", Tool::Fiox).4.as_deref(),
        Some("func=td_io_queue, error=Operation not supported")
    );
    r.same_outcome("nullb-trim-conventional", true);
    assert!(!x.stderr.contains("io_u error"), "{}", x.stderr);
    for name in SHARED {
        for t in [Tool::Fio, Tool::Fiox] {
            let (code, err, bytes, _, _) = r.outcome(name, t);
            assert_eq!((code, err, bytes[1]), (0, 0, 48 << 20), "{name}: {t:?}: {}", r.out(name, t).stderr);
        }
    }
    for (name, words) in [
        ("bad-trim-bs", "/dev/nvme0n1: trim block size 1048576 is not the zone size 16777216"),
        ("bad-trim-bsrange", "bsrange and bssplit are not allowed for trim with zonemode=zbd"),
        ("bad-verify-bs", "/dev/nvme0n1: block size 49152 is not a divisor of the zone size 16777216"),
        ("bad-zoneskip", "/dev/nvme0n1: zoneskip 8388608 is not a multiple of the device zone size 16777216."),
        ("bad-buffered", "Using direct I/O is mandatory for writing to ZBD drives"),
        ("scsi-managed-buffered", "Using direct I/O is mandatory for writing to ZBD drives"),
        ("scsi-managed-max-open", "Specified --max_open_zones (16) is larger than max (8)"),
    ] {
        refused(&r, name, words);
    }
}
