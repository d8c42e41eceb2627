//! fiox's intended latency (no coordinated omission) on a device made to stall for a known
//! time: nbdkit's pause filter stops serving requests for 1 s in the middle of a paced job.
//! fio's figures (and fiox's identical ones) see one slow I/O, so their p99 stays at the
//! service time; the intended latency, measured from when each I/O was due by the job's rate,
//! sees every I/O the stall held back. Its maximum is the stall's length, within the rate's gap
//! and the histogram's resolution.

use std::time::Duration;

use super::nbd::{doc, run_on, NbdDisk};
use crate::util::skip;

fn pct(o: &serde_json::Value, p: &str) -> u64 {
    o["percentile"][p].as_u64().unwrap_or_else(|| panic!("no {p} percentile in {o}"))
}

/// rate_iops=200 (a 5 ms gap), psync, 4 KiB direct reads for 4 s over a 1 s stall, fio 3.33
/// beside fiox, then fiox with Poisson arrivals. Both tools make up for the stall afterwards
/// (800 I/Os in 4 s), both report a clat p99 far below the stall and the stalled I/O as their
/// clat maximum; only fiox's `fiox_intended_lat_ns` (and its normal-output block and log) shows
/// the stall at p99.
#[test]
fn intended_latency_shows_a_stall_that_fios_figures_hide() {
    let disk = match NbdDisk::start(&["--filter=pause", "memory", "64M", "pause-control={dir}/ctl"], 64 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let gap_ms = 5u64;
    let base = [
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--ioengine=psync",
        "--rate_iops=200",
        "--time_based",
        "--runtime=4",
    ];
    for (fiox, poisson) in [(false, false), (true, false), (true, true)] {
        let who = format!("fiox {fiox}, poisson {poisson}");
        let mut args = base.to_vec();
        if poisson {
            args.push("--rate_process=poisson");
        }
        let pause = disk.stall(Duration::from_millis(1500), Duration::from_millis(1000));
        let out = run_on(fiox, &disk, &args);
        let held = pause.join().unwrap().as_nanos() as u64;
        assert_eq!(out.code, 0, "{who}: {}", out.stderr);
        let r = &doc(&out)["jobs"][0]["read"];
        let ios = r["total_ios"].as_u64().unwrap();
        let clat = &r["clat_ns"];
        let (clat_p99, clat_max) = (pct(clat, "99.000000"), clat["max"].as_u64().unwrap());
        println!(
            "{who}: {ios} I/Os, stall {} ms, clat p99 {} us, max {} ms",
            held / 1_000_000,
            clat_p99 / 1000,
            clat_max / 1_000_000
        );
        // The schedule is made up for after the stall, as fio does: 200 a second over 4 s.
        let (lo, hi) = if poisson { (600, 1000) } else { (760, 840) };
        assert!((lo..=hi).contains(&ios), "{who}: {ios} I/Os");
        assert!(clat_p99 < 50_000_000, "{who}: the fio-compatible clat p99 ({clat_p99} ns) hides the stall");
        assert!(clat_max > held * 9 / 10, "{who}: one I/O waited through the stall: max {clat_max} ns");
        let Some(intended) = r.get("fiox_intended_lat_ns") else {
            assert!(!fiox, "{who}: no intended latency");
            continue;
        };
        let (p99, max, top) =
            (pct(intended, "99.000000"), intended["max"].as_u64().unwrap(), pct(intended, "99.990000"));
        println!(
            "{who}: intended p99 {} ms, p99.99 {} ms, max {} ms",
            p99 / 1_000_000,
            top / 1_000_000,
            max / 1_000_000
        );
        assert_eq!(intended["N"].as_u64(), Some(ios), "{who}: every I/O has an intended latency");
        assert!(p99 > held / 2, "{who}: the intended p99 ({p99} ns) shows the stall ({held} ns)");
        // The longest wait is the I/O due first in the stall: the stall's length, less up to
        // one gap (it fell due after the stall began), plus a few ms of service and wake-up.
        // Poisson gaps are longer now and then. The stall's own length is timed by the thread
        // that pauses and resumes the server, so it carries that thread's round trips too (up
        // to 10 ms on a loaded machine). The same slack bounds it from above: an I/O due just
        // before the stall (a Poisson gap, or the pacer running late on a loaded machine) waits
        // through the stall plus that lateness (CI once: 1049 ms for a 1000 ms stall).
        let slack = (if poisson { 5 * gap_ms } else { gap_ms } + 10) * 1_000_000;
        assert!(
            max + slack >= held && max <= held + slack + 20_000_000,
            "{who}: intended max {max} ns, stall {held} ns"
        );
        // The histogram's top bucket holds it, within half a bucket (1/128 of the value).
        assert!(top.abs_diff(max) <= max / 128 + 1, "{who}: top bucket {top} ns, max {max} ns");
    }
}

/// The normal output shows the intended latency after fio's percentiles for a paced job only,
/// and `write_intended_lat_log` writes one fio-format line per I/O whose largest value is the
/// report's maximum; an unpaced job's reports have none of it.
#[test]
fn intended_latency_in_normal_output_and_log_only_for_paced_jobs() {
    let dir = crate::util::scratch();
    let common = ["--name=j", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1m", "--number_ios=50"];
    let paced = [&common[..], &["--rate_iops=1000"]].concat();
    let out = crate::util::fiox(dir.path(), &paced);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let lines: Vec<&str> = out.stdout.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("    intended lat (")).expect("an intended lat line");
    assert!(lines[at - 1].starts_with("     |"), "after fio's percentiles: {}", out.stdout);
    assert!(lines[at + 1].starts_with("    intended lat percentiles ("), "{}", out.stdout);
    let json =
        crate::util::fiox(dir.path(), &[&paced[..], &["--output-format=json", "--write_intended_lat_log=il"]].concat());
    assert_eq!((json.code, json.stderr.as_str()), (0, ""));
    let intended = &doc(&json)["jobs"][0]["read"]["fiox_intended_lat_ns"];
    assert_eq!(intended["N"].as_u64(), Some(50));
    let log = std::fs::read_to_string(dir.path().join("il_intended_lat.1.log")).expect("the intended latency log");
    assert!(log.lines().all(|l| l.split(", ").count() == 5), "fio's five columns: {log}");
    let values: Vec<u64> = log.lines().map(|l| l.split(", ").nth(1).unwrap().parse().unwrap()).collect();
    assert_eq!(values.len(), 50, "{log}");
    assert_eq!(values.iter().max().copied(), intended["max"].as_u64(), "{log}");
    for fmt in ["json", "normal"] {
        let f = format!("--output-format={fmt}");
        let out = crate::util::fiox(dir.path(), &[&common[..], &[f.as_str()]].concat());
        assert!(!out.stdout.contains("intended"), "{}", out.stdout);
    }
    let terse = crate::util::fiox(dir.path(), &[&paced[..], &["--minimal"]].concat());
    let plain = crate::util::fiox(dir.path(), &[&common[..], &["--minimal"]].concat());
    let fields = |s: &str| s.trim().split(';').count();
    assert_eq!(fields(&terse.stdout), fields(&plain.stdout), "terse output is fio's");
}
