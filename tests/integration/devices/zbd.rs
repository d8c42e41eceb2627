//! `zonemode=zbd` against fio 3.33, in one guest with an emulated NVMe ZNS namespace
//! (/dev/nvme0n1: 16 zones of 16 MiB, no open-zone limit) and a zoned null_blk device
//! (/dev/nullb0: 2 conventional zones, then sequential zones of 16 MiB with a capacity of
//! 12 MiB, at most 4 open). Each run starts from a known zone state (reset, or filled by fio),
//! made again before each tool.

use super::guest::{available, Batch, Results, Tool};

const ZNS: &str = "/dev/nvme0n1";
const NULLB: &str = "/dev/nullb0";

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
        if !["two-jobs", "numjobs-share-zones"].contains(name) {
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
