//! `metrics_listen`: Debian's real Prometheus scrapes a running fiox, and its query API returns
//! the series, with the figures the final report gives.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::util::{free_port, json, scratch, skip, Out};

/// One HTTP GET on loopback; the body, or `None` when nothing answers.
pub(crate) fn get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(text.split_once("\r\n\r\n").map_or(text.clone(), |(_, b)| b.to_string()))
}

/// Kills the child when the test ends, also when it fails.
struct Child(std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn prometheus_scrapes_a_running_job() {
    if !std::path::Path::new("/usr/bin/prometheus").exists() {
        skip!("Debian's prometheus is not installed (scripts/test.sh installs it)");
    }
    let dir = scratch();
    let (fiox_port, prom_port) = (free_port(), free_port());
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: fiox\n    static_configs:\n      - targets: ['127.0.0.1:{fiox_port}']\n"
    );
    std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
    let _prom = Child(
        std::process::Command::new("/usr/bin/prometheus")
            .arg(format!("--config.file={}", dir.path().join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = Instant::now();
    while get(prom_port, "/-/ready").is_none_or(|b| !b.contains("Ready")) {
        assert!(t0.elapsed() < Duration::from_secs(30), "prometheus did not come up");
        std::thread::sleep(Duration::from_millis(200));
    }
    let listen = format!("--metrics_listen={fiox_port}");
    let run = std::process::Command::new(crate::util::fiox_bin())
        .args(["--name=m", "--ioengine=null", "--size=1g", "--rw=randrw", "--time_based", "--runtime=8"])
        .args(["--rate_iops=400", &listen, "--output-format=json"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Our own look in the middle of the run: the exposition format, loopback only.
    std::thread::sleep(Duration::from_millis(2500));
    let page = get(fiox_port, "/metrics").expect("fiox serves /metrics during the run");
    for want in [
        "# TYPE fiox_ios_total counter",
        "fiox_ios_total{jobname=\"m\",clone=\"0\",direction=\"read\"} ",
        "# TYPE fiox_completion_latency_seconds summary",
        "quantile=\"0.99\"",
        "fiox_inflight_ios{jobname=\"m\",clone=\"0\",direction=\"write\"} ",
        "fiox_iops{jobname=\"m\",clone=\"0\",direction=\"read\"} ",
    ] {
        assert!(page.contains(want), "{want} missing from:\n{page}");
    }
    assert!(get(fiox_port, "/other").is_some_and(|b| b.contains("/metrics only")));
    // Prometheus scrapes the running job (its first scrape of a new target may wait a while).
    let scraped = |q: &str| {
        get(prom_port, &format!("/api/v1/query?query={q}")).is_some_and(|b| b.contains("\"direction\":\"read\""))
    };
    let t1 = Instant::now();
    while !scraped("fiox_ios_total") {
        assert!(t1.elapsed() < Duration::from_secs(5), "prometheus never scraped the running job");
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = run.wait_with_output().unwrap();
    let out = Out::from(o);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let report = json(&out);
    // What Prometheus stored: the series with its labels, and at most the report's count (the
    // last scrape lands within a second of the end).
    std::thread::sleep(Duration::from_millis(1500));
    for dir_name in ["read", "write"] {
        let query =
            format!("/api/v1/query?query=max_over_time(fiox_ios_total%7Bdirection%3D%22{dir_name}%22%7D%5B1m%5D)");
        let body = get(prom_port, &query).expect("prometheus answers");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        let result = &v["data"]["result"][0];
        assert_eq!((&result["metric"]["job"], &result["metric"]["jobname"]), (&"fiox".into(), &"m".into()), "{body}");
        let stored: f64 = result["value"][1].as_str().unwrap().parse().unwrap();
        let total = report["jobs"][0][dir_name]["total_ios"].as_f64().unwrap();
        assert!(stored > 0.5 * total && stored <= total, "{dir_name}: prometheus {stored}, report {total}");
    }
    let body = get(
        prom_port,
        "/api/v1/query?query=max_over_time(fiox_completion_latency_seconds%7Bquantile%3D%220.99%22%7D%5B1m%5D)",
    )
    .unwrap();
    assert!(body.contains("\"direction\":\"read\""), "{body}");
}

/// A bad address or a port already taken stops the run before any I/O, naming the option.
#[test]
fn metrics_listen_mistakes_stop_before_io() {
    let dir = scratch();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = format!("--metrics_listen={}", taken.local_addr().unwrap());
    for (arg, want) in
        [("--metrics_listen=localhost:x", "metrics_listen=localhost:x"), (busy.as_str(), "cannot listen")]
    {
        let out = crate::util::fiox(dir.path(), &["--name=m", "--size=64k", "--filename=m.dat", arg]);
        assert_eq!(out.code, 1, "{arg}");
        assert!(out.stderr.contains(want), "{arg}: {}", out.stderr);
        assert!(!dir.path().join("m.dat").exists(), "{arg}: no file laid out");
    }
}
