//! `fiox s3 bench --client`: two fiox servers on loopback each run a share of the bench on the
//! SeaweedFS server the tests start, under a prefix of their own; the coordinator's report has
//! each client's operations and All clients, merged bucket by bucket.

use std::process::{Command, Stdio};

use super::{run, seaweed, KEY, SECRET};
use crate::util::{fiox_bin, free_port, wait_listening};

/// A `fiox --server` killed and reaped when dropped.
struct Server(std::process::Child, u16);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn server() -> Server {
    let port = free_port();
    let child = Command::new(fiox_bin())
        .arg(format!("--server=ip:127.0.0.1,{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port);
    Server(child, port)
}

/// Two hosts `get` from one bucket: the report (fio's client JSON) has each host's `get` job
/// and All clients, whose request count and bytes are the hosts' sums and whose percentiles
/// lie between the hosts' (the histograms added, not the percentiles averaged), for the whole
/// request and for the time to first byte; the objects
/// of both prefixes and the bucket are gone afterwards.
#[test]
fn s3_bench_on_two_hosts_merges_them() {
    s3_or_skip!(s3);
    let (a, b) = (server(), server());
    let mut args: Vec<String> = ["s3", "bench", "get"].map(String::from).to_vec();
    args.push(format!("--host=127.0.0.1:{}", s3.port));
    args.push(format!("--access-key={KEY}"));
    args.push(format!("--secret-key={SECRET}"));
    args.extend(["--bucket=fiox-multi-a", "--prefix=two", "--obj.size=8KiB", "--concurrent=2"].map(String::from));
    args.extend(["--objects=16", "--duration=2s", "--json"].map(String::from));
    args.push(format!("--client=127.0.0.1,{}", a.1));
    args.push("--client".into());
    args.push(format!("127.0.0.1,{}", b.1));
    let (out, _) = run(&args);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let stats = j["client_stats"].as_array().unwrap_or_else(|| panic!("{}", out.stdout));
    let get = |name: &str| -> Vec<&serde_json::Value> {
        stats.iter().filter(|s| s["jobname"].as_str().is_some_and(|n| n.starts_with(name))).collect()
    };
    let hosts = get("get");
    assert_eq!(hosts.len(), 2, "{}", out.stdout);
    let all = get("All clients");
    assert!(!all.is_empty(), "{}", out.stdout);
    let all = all[0];
    let ios: Vec<u64> = hosts.iter().map(|h| h["read"]["total_ios"].as_u64().unwrap()).collect();
    assert!(ios.iter().all(|&n| n > 10), "{ios:?}");
    assert_eq!(all["read"]["total_ios"].as_u64().unwrap(), ios.iter().sum::<u64>());
    assert_eq!(all["read"]["io_bytes"].as_u64().unwrap(), ios.iter().sum::<u64>() * 8192);
    let p99 = |v: &serde_json::Value| v["read"]["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap();
    let (lo, hi) = (p99(hosts[0]).min(p99(hosts[1])), p99(hosts[0]).max(p99(hosts[1])));
    assert!((lo..=hi).contains(&p99(all)), "{lo} {} {hi}", p99(all));
    assert_eq!(all["read"]["clat_ns"]["N"].as_u64().unwrap(), ios.iter().sum::<u64>());
    // The time to first byte is merged the same way, per operation.
    let t99 = |v: &serde_json::Value| v["read"]["ttfb_ns"]["percentile"]["99.000000"].as_u64().unwrap();
    let (lo, hi) = (t99(hosts[0]).min(t99(hosts[1])), t99(hosts[0]).max(t99(hosts[1])));
    assert!((lo..=hi).contains(&t99(all)), "ttfb {lo} {} {hi}", t99(all));
    assert_eq!(all["read"]["ttfb_ns"]["N"].as_u64().unwrap(), ios.iter().sum::<u64>());
    assert!(t99(all) <= p99(all), "the first byte comes before the last");
    assert!(s3.boto("c.head_bucket(Bucket='fiox-multi-a')").is_err(), "the bucket it made is removed");
}

/// The bench's flags, on the SeaweedFS server, in `bucket` under `prefix`.
fn bench_args(s3: &super::S3, mode: &str, bucket: &str, more: &[String]) -> Vec<String> {
    let mut args: Vec<String> = ["s3", "bench", mode].map(String::from).to_vec();
    args.push(format!("--host=127.0.0.1:{}", s3.port));
    args.push(format!("--access-key={KEY}"));
    args.push(format!("--secret-key={SECRET}"));
    args.push(format!("--bucket={bucket}"));
    args.extend(["--obj.size=4KiB", "--concurrent=2", "--objects=8", "--json"].map(String::from));
    args.extend(more.iter().cloned());
    args
}

/// Hosts from `--hosts` and from a hosts file given to `--client`, watched and repeated by the
/// coordinator: its Prometheus endpoint and live page show the merged operations (request and
/// first-byte latency) while the hosts run; `--repeat-until` runs the whole bench three times
/// and reports the last run merged, with every run's figure; the bucket is gone afterwards.
#[test]
fn s3_bench_host_lists_watched_and_repeated() {
    use super::watch::{finish, poll, sample, Child};
    s3_or_skip!(s3);
    let (a, b) = (server(), server());
    let dir = crate::util::scratch();
    let file = dir.path().join("hosts");
    std::fs::write(&file, format!("# the second host\n127.0.0.1:{}\n", b.1)).unwrap();
    let (live, metrics) = (free_port(), free_port());
    let more = [
        format!("--hosts=127.0.0.1:{}", a.1),
        format!("--client={}", file.display()),
        format!("--live={live}"),
        format!("--metrics={metrics}"),
        "--duration=2s".into(),
        "--repeat-until=iops:95%".into(),
        "--repeat-max=3".into(),
    ];
    let args = bench_args(s3, "get", "fiox-multi-w", &more);
    let mut cmd = Command::new(crate::util::fiox_bin());
    let mut child = Child(cmd.args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap());
    let gets = |t: &str| sample(t, "fiox_s3_requests_total{operation=\"GET\"}").unwrap_or(0.0);
    let first = poll(metrics, "/metrics", |t| gets(t) > 0.0);
    assert!(first.contains("fiox_s3_first_byte_latency_seconds_count{operation=\"GET\"}"), "{first}");
    let page = poll(live, "/live.json", |b| b.contains("\"intervals\":[{"));
    let j: serde_json::Value = serde_json::from_str(&page).unwrap();
    let iv = &j["runs"][0]["intervals"][0];
    assert_eq!(iv["jobs"][0]["name"], "get", "{iv}");
    assert!(iv["all"]["iops"].as_f64().unwrap() > 0.0, "{iv}");
    let out = finish(&mut child.0);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{}", out.stdout);
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let r = &j["fiox"]["repeat_until"];
    assert_eq!((r["runs"].as_u64(), r["met"].as_u64()), (Some(3), Some(1)), "{r}");
    let hosts: Vec<&str> = j["fiox"]["hosts"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    let stats = j["client_stats"].as_array().unwrap();
    let ios: Vec<u64> = stats.iter().map(|s| s["read"]["total_ios"].as_u64().unwrap()).collect();
    assert_eq!(ios.len(), 3, "two hosts and All clients");
    assert_eq!(ios[2], ios[0] + ios[1]);
    // The figure of the last run is its merged IOPS.
    let last = r["values"][2].as_f64().unwrap();
    let iops = stats[2]["read"]["iops"].as_f64().unwrap();
    assert!((last - iops).abs() < 0.02 * iops, "{last} {iops}");
    assert!(s3.boto("c.head_bucket(Bucket='fiox-multi-w')").is_err(), "the bucket it made is removed");
}

/// Servers that join (`fiox --server=join:ADDR`, as a launcher starts them) run the bench in
/// rank order; what cannot work with them is refused before any request: `--repeat-until` (a
/// joined server serves one run), hosts listed beside `--join`, `--join-count` alone.
#[test]
fn s3_bench_servers_join() {
    s3_or_skip!(s3);
    let port = free_port();
    let join = || {
        Command::new(crate::util::fiox_bin())
            .arg(format!("--server=join:127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut workers = [join(), join()];
    let more = [
        format!("--join=127.0.0.1:{port}"),
        "--join-count=2".into(),
        "--join-timeout=20s".into(),
        "--duration=2s".into(),
    ];
    let (out, _) = run(&bench_args(s3, "put", "fiox-multi-j", &more));
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{}", out.stdout);
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    for h in j["fiox"]["hosts"].as_array().unwrap() {
        assert_eq!((h["transport"].as_str(), h["status"].as_str()), (Some("join"), Some("ok")), "{h}");
    }
    let stats = j["client_stats"].as_array().unwrap();
    let ios: Vec<u64> = stats.iter().map(|s| s["write"]["total_ios"].as_u64().unwrap()).collect();
    assert!(ios.len() == 3 && ios[0] > 0 && ios[1] > 0 && ios[2] == ios[0] + ios[1], "{ios:?}");
    for w in &mut workers {
        assert!(w.wait().unwrap().success());
    }
    assert!(s3.boto("c.head_bucket(Bucket='fiox-multi-j')").is_err());
    for (more, msg) in [
        (
            vec![format!("--join=127.0.0.1:{port}"), "--join-count=2".into(), "--repeat-until=iops:5%".into()],
            "s3 bench: --repeat-until cannot go with --join: a joined server serves one run",
        ),
        (
            vec![format!("--join=127.0.0.1:{port}"), "--join-count=1".into(), "--client=127.0.0.1,9".into()],
            "s3 bench: --join cannot be combined with --client",
        ),
        (
            vec!["--join-count=2".into(), "--hosts=127.0.0.1:9".into()],
            "s3 bench: --join-count and --join-timeout go with --join",
        ),
    ] {
        let (out, took) = run(&bench_args(s3, "put", "fiox-multi-r", &more));
        assert_eq!(out.code, 1, "{more:?}");
        assert!(out.stderr.contains(msg), "{more:?}: {}", out.stderr);
        assert!(took < std::time::Duration::from_secs(10));
        assert!(s3.boto("c.head_bucket(Bucket='fiox-multi-r')").is_err(), "{more:?}: no bucket made");
    }
}
