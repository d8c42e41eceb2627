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
