//! Steady-state detection and latency-target mode against the real fio 3.33: the JSON
//! `steadystate` block's layout, that a steady job stops early (alone and as a group), what the
//! latency fields and lines print, `max_latency`'s failure, and bad values refused before any
//! I/O. Timings are only bounded loosely: the machine is shared and noisy.

use crate::util::{fiox, json, listing, scratch, tool, Out};

/// Runs both tools (fio first) on `args` in a fresh directory; both must succeed with an empty
/// stderr.
fn both(args: &[&str]) -> [(Out, serde_json::Value); 2] {
    [false, true].map(|fiox_run| {
        let dir = scratch();
        let out = tool(fiox_run, dir.path(), args);
        let who = if fiox_run { "fiox" } else { "fio" };
        assert_eq!(out.code, 0, "{who} {args:?}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{who} {args:?} wrote to stderr: {}", out.stderr);
        let doc = json(&out);
        (out, doc)
    })
}

/// The keys of an object, in order.
fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

/// A rate-limited null job is steady within a few percent from its first second.
const STEADY: &[&str] = &[
    "--name=s",
    "--ioengine=null",
    "--size=1G",
    "--rw=randread",
    "--time_based",
    "--runtime=30",
    "--rate_iops=20000",
    "--output-format=json",
];

#[test]
fn a_steady_job_stops_early_with_fio_s_steadystate_block() {
    let mut args = STEADY.to_vec();
    args.extend(["--ss=iops:10%", "--ss_dur=3"]);
    let [(_, f), (_, x)] = both(&args);
    let (fj, xj) = (&f["jobs"][0], &x["jobs"][0]);
    let (fs, xs) = (&fj["steadystate"], &xj["steadystate"]);
    assert_eq!(keys(xs), keys(fs), "steadystate keys");
    assert_eq!(keys(&xs["data"]), keys(&fs["data"]), "steadystate data keys");
    assert_eq!(keys(xs), ["ss", "duration", "attained", "criterion", "max_deviation", "slope", "data"]);
    // The block is the job's last key, after the latency fields.
    assert_eq!(keys(xj).last().map(String::as_str), Some("steadystate"));
    for (who, ss, job) in [("fio", fs, fj), ("fiox", xs, xj)] {
        assert_eq!(ss["ss"], "iops:10.000000%", "{who}");
        assert_eq!(ss["duration"], 3, "{who}");
        assert_eq!(ss["attained"], 1, "{who}: {ss}");
        assert!(ss["criterion"].as_str().unwrap().ends_with('%'), "{who}: {ss}");
        assert_eq!(ss["slope"].as_f64(), Some(0.0), "{who}");
        let iops = ss["data"]["iops"].as_array().unwrap();
        let bw = ss["data"]["bw"].as_array().unwrap();
        assert_eq!((iops.len(), bw.len()), (3, 3), "{who}");
        // Bandwidth in bytes per second: 4 KiB per I/O.
        let mean = ss["data"]["iops_mean"].as_f64().unwrap();
        assert!((mean - 20000.0).abs() < 2000.0, "{who}: {ss}");
        let bw_mean = ss["data"]["bw_mean"].as_f64().unwrap();
        assert!((bw_mean / mean - 4096.0).abs() < 50.0, "{who}: {ss}");
        // Attained after about ss_dur seconds, well before the 30 s runtime.
        let runtime = job["job_runtime"].as_u64().unwrap();
        assert!((2500..15000).contains(&runtime), "{who}: ran {runtime} ms");
    }
}

#[test]
fn a_group_is_judged_on_its_summed_samples_and_stops_together() {
    let mut args = STEADY.to_vec();
    args.extend(["--ss=iops_slope:5%", "--ss_dur=2", "--numjobs=2", "--group_reporting"]);
    let [(_, f), (_, x)] = both(&args);
    for (who, doc) in [("fio", &f), ("fiox", &x)] {
        let jobs = doc["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "{who}");
        let ss = &jobs[0]["steadystate"];
        assert_eq!((ss["ss"].as_str(), ss["attained"].as_u64()), (Some("iops_slope:5.000000%"), Some(1)), "{who}");
        assert_eq!(ss["max_deviation"].as_f64(), Some(0.0), "{who}");
        let mean = ss["data"]["iops_mean"].as_f64().unwrap();
        assert!((mean - 40000.0).abs() < 4000.0, "{who}: two jobs' IOPS summed: {ss}");
        // Both jobs stopped: the group's runtime is the sum of two short runs.
        let runtime = jobs[0]["job_runtime"].as_u64().unwrap();
        assert!(runtime < 2 * 15000, "{who}: ran {runtime} ms");
    }
}

#[test]
fn a_window_that_never_filled_is_padded_with_zeros_and_not_attained() {
    let args = [
        "--name=s",
        "--ioengine=null",
        "--size=1G",
        "--rw=randread",
        "--time_based",
        "--runtime=2",
        "--rate_iops=10000",
        "--ss=bw:1",
        "--ss_dur=5",
        "--output-format=json,normal",
    ];
    let [(f, fd), (x, xd)] = both(&args);
    for (who, out, doc) in [("fio", &f, &fd), ("fiox", &x, &xd)] {
        let ss = &doc["jobs"][0]["steadystate"];
        assert_eq!(ss["attained"], 0, "{who}");
        assert_eq!(ss["ss"], "bw:1.000000", "{who}");
        assert_eq!(ss["criterion"], "0.000000", "{who}");
        let bw: Vec<u64> = ss["data"]["bw"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(bw.len(), 5, "{who}");
        assert_eq!(&bw[2..], [0, 0, 0], "{who}: {bw:?}");
        // The mean is over all five slots.
        let mean = ss["data"]["bw_mean"].as_u64().unwrap();
        assert!(mean.abs_diff(bw.iter().sum::<u64>() / 5) <= 1, "{who}: {ss}");
        let line = out.stdout.lines().find(|l| l.starts_with("  steadystate  : ")).expect("a steadystate line");
        assert!(line.starts_with("  steadystate  : attained=no, bw="), "{who}: {line}");
        assert!(line.ends_with(", bw mean dev=0.000"), "{who}: {line}");
    }
}

#[test]
fn without_ss_dur_there_is_no_steadystate_output() {
    let args = ["--name=s", "--ioengine=null", "--size=1m", "--ss=iops:5%", "--output-format=json"];
    let [(_, f), (_, x)] = both(&args);
    assert!(f["jobs"][0].get("steadystate").is_none());
    assert!(x["jobs"][0].get("steadystate").is_none());
}

#[test]
fn latency_target_reports_the_depth_found_and_its_settings() {
    // The null engine meets any sane target: the search walks up to iodepth, then measures
    // one more window there and ends the job long before its runtime.
    let args = [
        "--name=s",
        "--ioengine=null",
        "--size=1G",
        "--rw=randread",
        "--iodepth=8",
        "--time_based",
        "--runtime=60",
        "--latency_target=10ms",
        "--latency_window=300ms",
        "--latency_percentile=99.5",
        "--output-format=json,normal",
    ];
    let [(f, fd), (x, xd)] = both(&args);
    for (who, out, doc) in [("fio", &f, &fd), ("fiox", &x, &xd)] {
        let j = &doc["jobs"][0];
        assert_eq!(j["latency_depth"], 8, "{who}");
        assert_eq!(j["latency_target"], 10_000_000, "{who}: in nanoseconds");
        assert_eq!(j["latency_window"], 300_000, "{who}: in microseconds");
        assert_eq!(j["latency_percentile"].as_f64(), Some(99.5), "{who}");
        // The report covers the last window only.
        let runtime = j["read"]["runtime"].as_u64().unwrap();
        assert!((250..5000).contains(&runtime), "{who}: {runtime} ms");
        assert!(
            out.stdout.contains("     latency   : target=10000000, window=300000, percentile=99.50%, depth=8\n"),
            "{who}: {}",
            out.stdout
        );
    }
}

#[test]
fn max_latency_fails_the_job_with_etimedout() {
    // A direct read from disk takes far longer than a microsecond.
    let args = [
        "--name=s",
        "--filename=t.dat",
        "--size=1m",
        "--rw=randread",
        "--direct=1",
        "--time_based",
        "--runtime=3",
        "--max_latency=1us",
        "--output-format=json",
    ];
    for fiox_run in [false, true] {
        let who = if fiox_run { "fiox" } else { "fio" };
        let dir = scratch();
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 1, "{who}: {}", out.stderr);
        assert!(out.stderr.contains("exceeds specified max (1000 nsec)"), "{who}: {}", out.stderr);
        let doc = json(&out);
        assert_eq!(doc["jobs"][0]["error"], 110, "{who}: ETIMEDOUT");
        assert!(doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap() <= 8, "{who}: stops at the first slow I/O");
    }
}

#[test]
fn bad_values_are_refused_before_any_io() {
    let cases: &[(&str, &str)] = &[
        ("--ss=iops:abc", "option 'ss'"),
        ("--ss=foo:1", "option 'ss'"),
        ("--steadystate=iops", "option 'steadystate'"),
        ("--ss_dur=abc", "option 'ss_dur'"),
        ("--latency_percentile=150", "option 'latency_percentile'"),
        ("--latency_target=abc", "option 'latency_target'"),
    ];
    for (bad, names) in cases {
        let dir = scratch();
        let out = fiox(dir.path(), &["--name=j", "--filename=t.dat", "--size=1m", "--ss_dur=2", bad]);
        assert_ne!(out.code, 0, "{bad}");
        assert!(out.stderr.contains(names), "{bad}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{bad}: {}", out.stdout);
        assert!(listing(dir.path()).is_empty(), "{bad}: files were made");
    }
}
