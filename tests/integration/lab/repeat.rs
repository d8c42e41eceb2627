//! `--repeat-until=METRIC:BOUND%` and `--repeat-max=N` (fiox): a run, or each sweep point, is
//! repeated until the 95% confidence interval of the metric's mean is within the bound, with
//! at least three runs; a bound never reached ends at the maximum with exit status 2 and says
//! so; bad values are refused before any I/O.

use serde_json::Value;

use crate::util::{fiox, scratch};

/// A null job held at 2000 IOPS: its IOPS are the same in every run.
const STEADY: [&str; 8] = [
    "--name=j",
    "--ioengine=null",
    "--rw=randread",
    "--bs=4k",
    "--size=1g",
    "--time_based",
    "--runtime=0.3",
    "--rate_iops=2000",
];

/// An unpaced null job's mean latency differs from run to run in the last digits.
const JITTERY: [&str; 7] =
    ["--name=j", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based", "--runtime=0.1"];

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_loose_bound_stops_after_three_runs() {
    let dir = scratch();
    let out = fiox(dir.path(), &[&STEADY[..], &["--repeat-until=iops:2%", "--output-format=json"]].concat());
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let doc = json(&out.stdout);
    let r = &doc["fiox"]["repeat_until"];
    assert_eq!((r["metric"].as_str(), r["runs"].as_u64(), r["met"].as_u64()), (Some("iops"), Some(3), Some(1)), "{r}");
    assert_eq!(r["max_runs"].as_u64(), Some(10), "the default maximum");
    let values: Vec<f64> = r["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(values.iter().all(|v| (v - 2000.0).abs() < 40.0), "{values:?}");
    assert!(r["ci95_pct"].as_f64().unwrap() <= 2.0, "{r}");
    // The report is the last run's, fio's in every other respect.
    let ios = doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!((580..=620).contains(&ios), "one run's I/Os, not three: {ios}");
    // The normal output ends with the summary.
    let out = fiox(dir.path(), &[&STEADY[..], &["--repeat-until=bw:2%"]].concat());
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let line = out.stdout.lines().find(|l| l.starts_with("fiox repeat-until bw:2%: 3 runs, mean=")).expect("summary");
    assert!(line.ends_with("): within the bound"), "{line}");
    assert_eq!(out.stdout.matches("Run status group 0").count(), 1, "one report: {}", out.stdout);
}

#[test]
fn an_impossible_bound_stops_at_the_maximum_with_status_2() {
    let dir = scratch();
    let args = ["--repeat-until=lat:0.000001%", "--repeat-max=4", "--output-format=json"];
    let out = fiox(dir.path(), &[&JITTERY[..], &args].concat());
    assert_eq!((out.code, out.stderr.as_str()), (2, ""), "not within the bound: exit status 2");
    let r = &json(&out.stdout)["fiox"]["repeat_until"];
    assert_eq!((r["runs"].as_u64(), r["max_runs"].as_u64(), r["met"].as_u64()), (Some(4), Some(4), Some(0)), "{r}");
    assert!(r["ci95_pct"].as_f64().unwrap() > 0.000001, "the achieved interval is reported: {r}");
    // IOPS, not p99: the null engine's p99 falls in the same histogram bucket run after run,
    // so its interval can be exactly 0 (met).
    let out = fiox(dir.path(), &[&JITTERY[..], &["--repeat-until=iops:0.000001%", "--repeat-max=3"]].concat());
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.contains("NOT within the bound after 3 runs (--repeat-max)"), "{}", out.stdout);
}

#[test]
fn bad_repeat_values_are_refused_before_any_io() {
    let dir = scratch();
    let cases: [(&[&str], &str); 6] = [
        (&["--repeat-until=ipos:2%"], "unknown metric 'ipos'"),
        (&["--repeat-until=iops:2"], "must be a percentage"),
        (&["--repeat-until=iops:0%"], "above 0%"),
        (&["--repeat-until=iops"], "METRIC:BOUND"),
        (&["--repeat-until=iops:2%", "--repeat-max=2"], "at least 3 runs"),
        (&["--repeat-max=5"], "--repeat-max needs --repeat-until"),
    ];
    for (extra, why) in cases {
        let args = [&["--name=j", "--filename=t.dat", "--size=1m", "--rw=write"][..], extra].concat();
        let out = fiox(dir.path(), &args);
        assert_eq!(out.code, 1, "{extra:?}");
        assert!(out.stderr.starts_with("fiox: --repeat-") && out.stderr.contains(why), "{extra:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{extra:?}: {}", out.stdout);
        assert!(!dir.path().join("t.dat").exists(), "{extra:?}: no I/O");
    }
    // The sweep's flags, likewise, before any point runs.
    let sweep: [(&[&str], &str); 4] = [
        (&["--repeat-until=bw:x%"], "not a number"),
        (&["--repeat-max=5"], "needs --repeat-until"),
        (&["--repeat-until=bw:5%", "--repeat=3"], "exclude each other"),
        (&["--repeat-until=bw:5%", "--repeat-max=1"], "at least 3 runs"),
    ];
    for (extra, why) in sweep {
        let args =
            [&["sweep", "--vary=bs=4k,8k", "--out=o", "--name=j", "--filename=t.dat", "--size=1m"][..], extra].concat();
        let out = fiox(dir.path(), &args);
        assert_eq!(out.code, 1, "{extra:?}");
        assert!(out.stderr.contains(why), "{extra:?}: {}", out.stderr);
        assert!(!dir.path().join("t.dat").exists() && !dir.path().join("o").exists(), "{extra:?}: nothing ran");
    }
}

/// Each sweep point repeats until its own bound: steady points stop after three runs; an
/// impossible bound runs every point to the maximum and exits 2, `sweep.json` recording each
/// point's figures and verdict.
#[test]
fn sweep_points_repeat_until_their_bound() {
    let dir = scratch();
    let base = ["sweep", "--vary=bs=4k,64k", "--out=steady"];
    let out = fiox(dir.path(), &[&base[..], &["--repeat-until=iops:2%"], &STEADY[..]].concat());
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let points = dir.path().join("steady/points");
    let reports =
        std::fs::read_dir(&points).unwrap().filter(|e| e.as_ref().unwrap().path().extension() == Some("json".as_ref()));
    assert_eq!(reports.count(), 6, "three runs per point");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("steady/sweep.json")).unwrap()).unwrap();
    for id in ["bs=4k", "bs=64k"] {
        let p = &state["repeat_until"][id];
        assert_eq!((p["runs"].as_u64(), p["met"].as_bool()), (Some(3), Some(true)), "{id}: {p}");
    }
    // Paced at 2000 IOPS; a loaded machine can fall a little short in one run.
    let mean: f64 = out
        .stdout
        .split("bs=64k: iops over 3 runs: mean ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!((1900.0..=2001.0).contains(&mean), "{}", out.stdout);
    let csv = std::fs::read_to_string(dir.path().join("steady/summary.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("iops_ci95"), "{csv}");

    let args = [
        &["sweep", "--vary=bs=4k,64k", "--out=tight", "--repeat-until=lat:0.000001%", "--repeat-max=3"][..],
        &JITTERY[..],
    ]
    .concat();
    let out = fiox(dir.path(), &args);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("tight/sweep.json")).unwrap()).unwrap();
    for id in ["bs=4k", "bs=64k"] {
        let p = &state["repeat_until"][id];
        assert_eq!((p["runs"].as_u64(), p["met"].as_bool()), (Some(3), Some(false)), "{id}: {p}");
        assert!(p["ci95_pct"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(out.stdout.matches("NOT within 0.000001%").count(), 2, "{}", out.stdout);
}
