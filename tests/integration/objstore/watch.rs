//! `fiox s3 bench` watched and repeated, against the SeaweedFS server the tests start: the live
//! page and the Prometheus endpoint during a run (per operation, checked by Debian's promtool
//! when it is there), and `--repeat-until` with the jobs' meaning and report.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{run, seaweed, KEY, S3, SECRET};
use crate::lab::metrics::get;
use crate::util::{fiox_bin, free_port, Out};

fn args(s3: &S3, mode: &str, bucket: &str, more: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["s3", "bench", mode].map(String::from).to_vec();
    a.push(format!("--host=127.0.0.1:{}", s3.port));
    a.push(format!("--access-key={KEY}"));
    a.push(format!("--secret-key={SECRET}"));
    a.push(format!("--bucket={bucket}"));
    a.extend(["--obj.size=16KiB", "--concurrent=4", "--objects=32"].map(String::from));
    a.extend(more.iter().map(|s| s.to_string()));
    a
}

fn bucket_exists(s3: &S3, bucket: &str) -> bool {
    s3.boto(&format!("c.head_bucket(Bucket='{bucket}')")).is_ok()
}

/// `--repeat-until`: at least three runs, each figure in `fiox.repeat_until` with the jobs'
/// keys, the report the last run's; a bound no run can meet stops at `--repeat-max` with exit
/// status 2 and the text report's verdict line. Every run's objects and the bucket are gone.
#[test]
fn s3_bench_repeats_until_the_interval_is_narrow() {
    s3_or_skip!(s3);
    let (out, _) = run(&args(s3, "get", "fiox-watch-a", &["--duration=1s", "--repeat-until=iops:90%", "--json"]));
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{}", out.stdout);
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let r = &j["fiox"]["repeat_until"];
    let values: Vec<f64> = r["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(values.len() >= 3 && r["runs"] == values.len() && r["met"] == 1, "{r}");
    assert_eq!(
        (r["metric"].as_str(), r["unit"].as_str(), r["max_runs"].as_u64()),
        (Some("iops"), Some("IOPS"), Some(10))
    );
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    assert!((r["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean, "{r}");
    // The report is the last run's: its IOPS is the last value.
    let iops = j["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!((iops - values[values.len() - 1]).abs() < 1e-6 * iops, "{iops} {values:?}");
    assert!(!bucket_exists(s3, "fiox-watch-a"));

    let (out, _) =
        run(&args(s3, "put", "fiox-watch-b", &["--duration=500ms", "--repeat-until=p99:0.0001%", "--repeat-max=3"]));
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stderr, "");
    assert!(
        out.stdout.contains("fiox repeat-until p99:0.0001%: 3 runs, mean=")
            && out.stdout.contains("NOT within the bound after 3 runs (--repeat-max)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.starts_with("Operation: PUT"), "{}", out.stdout);
    assert!(!bucket_exists(s3, "fiox-watch-b"));
}

/// Kills the bench when the test ends, also when it fails.
pub(super) struct Child(pub std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `port` for `path` until `ok` holds of the body (at most 20 s).
pub(super) fn poll(port: u16, path: &str, ok: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        if let Some(body) = get(port, path).filter(|b| ok(b)) {
            return body;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "{path} on {port}: {:?}", get(port, path));
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The value of the sample line `name{labels}` in an exposition text.
pub(super) fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// `--live` and `--metrics` while a mixed bench runs: the page and its JSON show a series per
/// operation each second, the endpoint counts each operation and gives latency quantiles from
/// the histograms (a valid exposition by promtool's check); the counts only grow, and stay
/// within the final report's.
#[test]
fn s3_bench_serves_live_page_and_metrics() {
    s3_or_skip!(s3);
    let (live, metrics) = (free_port(), free_port());
    let a = args(
        s3,
        "mixed",
        "fiox-watch-c",
        &["--duration=4s", "--json", &format!("--live={live}"), &format!("--metrics=127.0.0.1:{metrics}")],
    );
    let child = Command::new(fiox_bin()).args(&a).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut child = Child(child);
    let first = poll(metrics, "/metrics", |b| b.contains("fiox_s3_requests_per_second{operation=\"GET\"}"));
    let gets = |t: &str| sample(t, "fiox_s3_requests_total{operation=\"GET\"}").unwrap();
    assert!(gets(&first) > 0.0, "{first}");
    for op in ["GET", "PUT", "STAT"] {
        assert!(
            first.contains(&format!("fiox_s3_request_latency_seconds{{operation=\"{op}\",quantile=\"0.99\"}}")),
            "{first}"
        );
        assert!(first.contains(&format!("fiox_s3_first_byte_latency_seconds_count{{operation=\"{op}\"}}")), "{first}");
    }
    if std::path::Path::new("/usr/bin/promtool").exists() {
        let mut p = Command::new("/usr/bin/promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        p.stdin.take().unwrap().write_all(first.as_bytes()).unwrap();
        let o = p.wait_with_output().unwrap();
        // A parse error or a lint finding (names, types, help) fails it.
        let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && said.is_empty(), "{said}\n{first}");
    }
    let page = poll(live, "/live.json", |b| b.contains("\"intervals\":[{"));
    let j: serde_json::Value = serde_json::from_str(&page).unwrap();
    let iv = &j["runs"][0]["intervals"][0];
    let names: Vec<&str> = iv["jobs"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"get") && names.contains(&"put"), "{iv}");
    assert!(iv["all"]["iops"].as_f64().unwrap() > 0.0 && iv["all"]["p99_ns"].as_u64().unwrap() > 0, "{iv}");
    assert!(get(live, "/").unwrap().contains("<title>fiox s3 bench mixed on 127.0.0.1:"));
    let later =
        poll(metrics, "/metrics", |b| sample(b, "fiox_s3_requests_total{operation=\"GET\"}") > Some(gets(&first)));
    let out = finish(&mut child.0);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let final_gets = report["jobs"][0]["read"]["total_ios"].as_u64().unwrap() as f64;
    assert!(gets(&later) <= final_gets, "{later}\n{final_gets}");
    assert!(!bucket_exists(s3, "fiox-watch-c"));
}

/// A port already taken ends the bench before any request: the bucket is never made.
#[test]
fn s3_bench_taken_port_stops_before_io() {
    s3_or_skip!(s3);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let (out, took) = run(&args(s3, "put", "fiox-watch-d", &["--duration=1s", &format!("--metrics={port}")]));
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains(&format!("--metrics=127.0.0.1:{port}: cannot listen there")), "{}", out.stderr);
    assert!(took < Duration::from_secs(10));
    assert!(!bucket_exists(s3, "fiox-watch-d"));
}

/// Waits for the bench and reads what it wrote (the report only: the pipes cannot fill).
pub(super) fn finish(c: &mut std::process::Child) -> Out {
    use std::io::Read;
    let (mut stdout, mut stderr) = (String::new(), String::new());
    c.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    c.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let code = c.wait().unwrap().code().unwrap_or(-1);
    Out { code, stdout, stderr }
}
