//! `read_iolog` (fio's iologs and blktrace traces) and `zonemode`, each against fio 3.33 on the
//! same job: the I/O done (from `write_iolog`), bytes and I/O counts, the time a replay takes,
//! and bad input refused before any I/O.

use std::path::Path;
use std::time::Instant;

use fiox_options::iolog::BlkRecord;

use super::surface::{both_iologs, offsets, Ios};
use crate::util::{fio, fiox, scratch};
use crate::util::{json, tool};

/// Bytes and I/O counts per direction (read, write, trim) of a JSON report's first job.
fn counts(v: &serde_json::Value) -> Vec<(u64, u64)> {
    let j = &v["jobs"][0];
    ["read", "write", "trim"]
        .iter()
        .map(|d| (j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap()))
        .collect()
}

fn write_data(dir: &Path, name: &str, len: usize) {
    std::fs::write(dir.join(name), vec![7u8; len]).unwrap();
}

/// A log written by fio and one written by fiox replay to the same bytes and I/O counts in both
/// tools, and fiox's own `write_iolog` of the replay repeats the log's I/O in order. (fio 3.33
/// writes no iolog while replaying: "read iolog overrides write_iolog".)
#[test]
fn logs_written_by_either_tool_replay_alike() {
    for writer in [false, true] {
        let dir = scratch();
        write_data(dir.path(), "t.dat", 1 << 20);
        let rec =
            ["--name=w", "--filename=t.dat", "--size=1m", "--rw=randrw", "--number_ios=40", "--write_iolog=rec.log"];
        let out = tool(writer, dir.path(), &rec);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let recorded = offsets(&dir.path().join("rec.log"));
        assert_eq!(recorded.len(), 40, "writer fiox={writer}");
        let args = ["--name=r", "--read_iolog=rec.log", "--ioengine=psync", "--output-format=json"];
        let f = fio(dir.path(), &args);
        let x = fiox(dir.path(), &[&args[..], &["--write_iolog=replay.log"]].concat());
        assert_eq!(x.code, 0, "{}", x.stderr);
        assert!(x.stderr.is_empty(), "{}", x.stderr);
        assert_eq!(counts(&json(&f)), counts(&json(&x)), "writer fiox={writer}");
        assert_eq!(offsets(&dir.path().join("replay.log")), recorded, "writer fiox={writer}");
    }
}

/// replay_scale divides offsets and replay_align rounds them down, in that order (fio: the log
/// below replays at 0, 4096, 4096 and 32768 with both set); sync lines are replayed.
#[test]
fn scale_and_align_move_offsets_like_fio() {
    let dir = scratch();
    write_data(dir.path(), "d", 1 << 20);
    let d = dir.path().join("d");
    let log = format!(
        "fio version 2 iolog\n{0} add\n{0} open\n{0} write 1000 4096\n{0} read 8193 1000\n{0} sync 0 0\n{0} read 12288 4096\n{0} write 65536 8192\n{0} close\n",
        d.display()
    );
    std::fs::write(dir.path().join("v2.log"), log).unwrap();
    let args = ["--name=r", "--read_iolog=v2.log", "--replay_scale=2", "--replay_align=4096", "--output-format=json"];
    let x = fiox(dir.path(), &[&args[..], &["--write_iolog=o.log"]].concat());
    assert_eq!(x.code, 0, "{}", x.stderr);
    let got: Ios = offsets(&dir.path().join("o.log"));
    // The sync is logged as fio logs one: at the offset of the file's latest I/O.
    let want: Ios = [("write", 0), ("read", 4096), ("sync", 4096), ("read", 4096), ("write", 32768)]
        .iter()
        .map(|(a, o)| (a.to_string(), *o))
        .collect();
    assert_eq!(got, want);
    let f = fio(dir.path(), &args);
    assert_eq!(counts(&json(&f)), counts(&json(&x)));
    assert_eq!(json(&x)["jobs"][0]["sync"]["total_ios"].as_u64(), Some(1));
    // fio refuses an alignment that is not a power of two while parsing.
    let bad = fiox(dir.path(), &["--name=r", "--read_iolog=v2.log", "--replay_align=3000"]);
    assert!(bad.code != 0 && bad.stderr.contains("power of two"), "{}", bad.stderr);
}

/// The log's times are kept between I/Os (scaled by replay_time_scale: 200 halves them) unless
/// replay_no_stall; fio 3.33 takes as long (measured: 0.88 s, 0.29 s, 0.58 s with its 0.28 s
/// start-up for the same log).
#[test]
fn replay_keeps_the_logs_time_unless_told_not_to() {
    let dir = scratch();
    write_data(dir.path(), "d", 1 << 16);
    let d = dir.path().join("d");
    let log = format!(
        "fio version 3 iolog\n0 {0} add\n0 {0} open\n100 {0} read 0 4096\n300100 {0} read 4096 4096\n600100 {0} write 8192 8192\n600100 {0} close\n",
        d.display()
    );
    std::fs::write(dir.path().join("t.log"), log).unwrap();
    let secs = |extra: &str| {
        let t = Instant::now();
        let out = fiox(dir.path(), &["--name=r", "--read_iolog=t.log", "--output-format=json", extra]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(counts(&json(&out))[0], (8192, 2));
        t.elapsed().as_secs_f64()
    };
    let normal = secs("--replay_time_scale=100");
    let fast = secs("--replay_no_stall=1");
    let double = secs("--replay_time_scale=200");
    assert!((0.55..1.5).contains(&normal), "{normal}");
    assert!(fast < 0.25, "{fast}");
    assert!((0.27..0.55).contains(&double), "{double}");
}

fn blk(recs: &[(u64, u64, u32, bool)]) -> Vec<u8> {
    recs.iter().flat_map(|&(t, sector, bytes, w)| BlkRecord::queue(t, 7 << 20, sector, bytes, w).to_bytes()).collect()
}

/// A blktrace trace (made here in blktrace's binary format: the kernel here refuses tracing)
/// replays onto replay_redirect as in fio; several traces merge into merge_blktrace_file.
#[test]
fn blktrace_traces_replay_and_merge() {
    let dir = scratch();
    write_data(dir.path(), "bt.dat", 1 << 20);
    std::fs::write(
        dir.path().join("a.bin"),
        blk(&[(1000, 0, 4096, false), (2000, 16, 8192, true), (3000, 64, 4096, false)]),
    )
    .unwrap();
    std::fs::write(dir.path().join("b.bin"), blk(&[(500, 8, 4096, true), (1500, 24, 4096, false)])).unwrap();
    let args = ["--name=b", "--read_iolog=a.bin", "--replay_redirect=bt.dat", "--output-format=json"];
    let f = fio(dir.path(), &args);
    let x = fiox(dir.path(), &[&args[..], &["--write_iolog=o.log"]].concat());
    assert_eq!(x.code, 0, "{}", x.stderr);
    assert_eq!(counts(&json(&f)), counts(&json(&x)));
    let o: Vec<u64> = offsets(&dir.path().join("o.log")).iter().map(|e| e.1).collect();
    assert_eq!(o, [0, 8192, 32768]);
    let skip = fiox(dir.path(), &[&args[..], &["--replay_skip=write"]].concat());
    assert_eq!(counts(&json(&skip))[1], (0, 0));
    let merged = fiox(
        dir.path(),
        &[
            "--name=m",
            "--read_iolog=a.bin:b.bin",
            "--merge_blktrace_file=m.bin",
            "--merge_blktrace_iters=1:2",
            "--replay_redirect=bt.dat",
            "--output-format=json",
        ],
    );
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(counts(&json(&merged))[..2], [(16384, 4), (16384, 3)]);
    assert_eq!(std::fs::metadata(dir.path().join("m.bin")).unwrap().len(), 7 * 48);
}

/// Bad input is refused before any I/O with the file and line, never a panic.
#[test]
fn bad_logs_are_refused_with_file_and_line() {
    let dir = scratch();
    write_data(dir.path(), "d", 8192);
    let d = dir.path().join("d");
    let cases = [
        (format!("fio version 2 iolog\n{0} add\n{0} frob 0 4096\n", d.display()), "line 3: unknown action 'frob'"),
        (
            format!("fio version 2 iolog\n{0} add\n{0} write zz 4096\n", d.display()),
            "line 3: 'zz' is not a valid offset",
        ),
        (format!("fio version 2 iolog\n{0} write 0 4096\n", d.display()), "line 2:"),
        ("hello\n".to_string(), "line 1: not an iolog"),
        (
            "fio version 2 iolog\n/nonexistent/x add\n/nonexistent/x read 0 1\n".to_string(),
            "line 2: '/nonexistent/x' does not exist",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(dir.path().join("bad.log"), &text).unwrap();
        let out = fiox(dir.path(), &["--name=r", "--read_iolog=bad.log"]);
        assert!(out.code != 0, "{text}");
        assert!(out.stderr.contains("bad.log") && out.stderr.contains(want), "{text}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert_eq!(std::fs::read(&d).unwrap(), vec![7u8; 8192], "{text}: the data was written");
    }
    let out = fiox(dir.path(), &["--name=r", "--read_iolog=missing.log"]);
    assert!(out.code != 0 && out.stderr.contains("cannot read read_iolog file 'missing.log'"), "{}", out.stderr);
}

/// zonemode=strided does zonesize bytes per zonerange, zoneskip apart, at fio's offsets.
#[test]
fn strided_zones_give_fios_offsets() {
    for args in [
        &["--rw=read", "--bs=4k", "--size=64k", "--zonemode=strided", "--zonesize=8k", "--zoneskip=8k"][..],
        &["--rw=read", "--bs=8k", "--size=64k", "--zonemode=strided", "--zonesize=12k", "--zonerange=16k"],
        &["--rw=write", "--bs=4k", "--size=64k", "--zonemode=strided", "--zonesize=12k", "--zonerange=16k"],
        &["--rw=read", "--bs=4k", "--size=64k", "--offset=8k", "--zonemode=strided", "--zonesize=8k", "--zoneskip=8k"],
        &[
            "--rw=read",
            "--bs=16k",
            "--size=256k",
            "--zonemode=strided",
            "--zonesize=32k",
            "--zonerange=64k",
            "--zoneskip=32k",
        ],
    ] {
        let (f, x) = both_iologs(args);
        assert_eq!(f, x, "{args:?}");
    }
    // Random I/O stays inside each zone's range, zone after zone.
    let (_, x) = both_iologs(&[
        "--rw=randread",
        "--bs=4k",
        "--size=64k",
        "--zonemode=strided",
        "--zonesize=16k",
        "--zonerange=32k",
    ]);
    for (i, (_, off)) in x.iter().enumerate() {
        let zone = (i as u64 / 4 % 2) * 32768;
        assert!((zone..zone + 32768).contains(off), "{x:?}");
    }
}

/// zonemode=zbd needs a zoned device: on a regular file the job fails before any I/O with one
/// line saying so; the zone options parse with fio's ranges; zonesize alone is refused as fio does.
#[test]
fn zbd_needs_a_zoned_device_and_options_keep_fios_ranges() {
    let dir = scratch();
    let base = ["--name=z", "--filename=z.dat", "--size=64k", "--rw=write"];
    let out = fiox(dir.path(), &[&base[..], &["--zonemode=zbd", "--zonesize=16k", "--max_open_zones=8"]].concat());
    assert!(out.code != 0, "{}", out.stdout);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(lines[0].contains("'z.dat' is not a zoned block device"), "{}", out.stderr);
    assert!(!dir.path().join("z.dat").exists(), "the file was laid out before the refusal");
    for (bad, why) in [
        ("--max_open_zones=5000", "5000"),
        ("--zone_reset_threshold=1.5", "1.5"),
        ("--zonemode=bogus", "bogus"),
        ("--zonesize=8k", "zonemode"),
    ] {
        let f = fio(dir.path(), &[&base[..], &[bad]].concat());
        let x = fiox(dir.path(), &[&base[..], &[bad]].concat());
        assert!(f.code != 0 && x.code != 0, "{bad}: fio {} fiox {}", f.code, x.code);
        assert!(x.stderr.contains(why), "{bad}: {}", x.stderr);
    }
    let ok = fiox(
        dir.path(),
        &[&base[..], &["--zonemode=none", "--ignore_zone_limits=1", "--read_beyond_wp=1", "--output-format=json"]]
            .concat(),
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}
