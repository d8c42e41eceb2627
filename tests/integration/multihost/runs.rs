//! Multi-host runs on loopback: fiox servers started by each test on free high ports (killed by
//! PID by a guard on every exit path), fiox coordinators against them, faults made for real
//! (kill -9, SIGSTOP), and fio 3.33's own client and server on either side. Jobs are paced
//! null-engine jobs of a second or a few, so timings hold on a busy 2-core machine.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{coordinate, fiox_server, Server};
use crate::util::{fio_bin, fiox_bin, free_port, scratch, skip, wait_listening};

fn fio_server(dir: &Path) -> Server {
    let port = free_port();
    let child = Command::new(fio_bin())
        .arg(format!("--server=ip:127.0.0.1,{port}"))
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port);
    Server { child, port }
}

/// A paced null job (light on the CPU) running `secs` seconds.
fn job(dir: &Path, name: &str, secs: u32) -> String {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("[global]\nioengine=null\nsize=64m\n[{name}]\nrw=randread\nbs=4k\ntime_based\nruntime={secs}\nrate_iops=4000\n"),
    )
    .unwrap();
    p.display().to_string()
}

fn client_args(servers: &[&Server], job: &str) -> Vec<String> {
    servers.iter().flat_map(|s| [format!("--client={}", s.addr()), job.to_string()]).collect()
}

fn args(pre: &[&str], rest: Vec<String>) -> Vec<String> {
    pre.iter().map(|s| s.to_string()).chain(rest).collect()
}

fn bins(v: &Value) -> std::collections::BTreeMap<u64, u64> {
    v["read"]["clat_ns"]["bins"]
        .as_object()
        .map(|o| o.iter().map(|(k, n)| (k.parse().unwrap(), n.as_u64().unwrap())).collect())
        .unwrap_or_default()
}

/// Three hosts, json+: stdout is one JSON document in fio 3.33's client layout; "All clients"
/// is last, its bins are the hosts' summed bucket by bucket, its percentiles are those of the
/// merged bins, its bytes the sum and its runtime the longest.
#[test]
fn three_hosts_json_plus_merge_is_exact() {
    let dir = scratch();
    let s: Vec<Server> = (0..3).map(|_| fiox_server(dir.path(), &[], &[])).collect();
    let j = job(dir.path(), "j", 1);
    let (o, _) =
        coordinate(dir.path(), &args(&["--output-format=json+"], client_args(&s.iter().collect::<Vec<_>>(), &j)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "stderr: {}", o.stderr);
    let d: Value = serde_json::from_str(&o.stdout).expect("stdout is exactly one JSON document");
    let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["fio version", "timestamp", "time", "global options", "client_stats", "disk_util", "fiox"]);
    let cs = d["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 4);
    for (e, srv) in cs.iter().zip(&s) {
        assert_eq!(
            (e["hostname"].as_str(), e["port"].as_u64()),
            (Some("127.0.0.1"), Some(srv.port as u64)),
            "host order"
        );
    }
    let all = &cs[3];
    assert_eq!(all["jobname"], "All clients");
    let hosts = &cs[..3];
    let sum: u64 = hosts.iter().map(|h| h["read"]["io_bytes"].as_u64().unwrap()).sum();
    assert!(sum > 0);
    assert_eq!(all["read"]["io_bytes"].as_u64(), Some(sum));
    let max_rt = hosts.iter().map(|h| h["read"]["runtime"].as_u64().unwrap()).max().unwrap();
    assert_eq!(all["read"]["runtime"].as_u64(), Some(max_rt));
    let mut merged = std::collections::BTreeMap::new();
    for h in hosts {
        for (k, n) in bins(h) {
            *merged.entry(k).or_insert(0) += n;
        }
    }
    assert_eq!(bins(all), merged, "All clients bins are the hosts' bins summed");
    // Percentiles recomputed from the merged bins, as fio does (first bucket whose running
    // count reaches p%).
    let total: u64 = merged.values().sum();
    assert_eq!(all["read"]["clat_ns"]["N"].as_u64(), Some(total));
    for (p, v) in all["read"]["clat_ns"]["percentile"].as_object().unwrap() {
        let want = p.parse::<f64>().unwrap() / 100.0 * total as f64;
        let mut cum = 0;
        let at = merged.iter().find(|(_, n)| {
            cum += **n;
            cum as f64 >= want
        });
        assert_eq!(v.as_u64(), at.map(|(k, _)| *k), "percentile {p}");
    }
    let fx = &d["fiox"];
    assert_eq!(fx["hosts"].as_array().unwrap().len(), 3);
    assert!(fx["hosts"].as_array().unwrap().iter().all(|h| h["status"] == "ok" && h["partial"] == 0));
    assert_eq!(fx["degraded"], 0);
    // Loopback hosts start together: the skew is measured and small.
    let skew = fx["start_skew_ns"].as_u64().unwrap();
    assert!(skew < 20_000_000, "start skew {skew} ns");
}

/// Two hosts, normal output: probe lines, each host's block in host-list order (not arrival
/// order), "All clients" with percentiles and units, the host table; stderr empty.
#[test]
fn two_hosts_normal_output() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    // The first host's job is longer: it reports last, and is still printed first.
    let (j1, j2) = (job(dir.path(), "long", 2), job(dir.path(), "short", 1));
    let a1 = vec![format!("--client={}", a.addr()), j1, format!("--client={}", b.addr()), j2];
    let (o, _) = coordinate(dir.path(), &a1);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "stderr: {}", o.stderr);
    let t = &o.stdout;
    assert_eq!(t.matches("hostname=").count(), 2, "{t}");
    assert!(t.contains("(fio-3.33 compatible), proto=1"));
    let (pa, pb) =
        (t.find(&format!("<{}> \nlong:", a.addr())).unwrap(), t.find(&format!("<{}> \nshort:", b.addr())).unwrap());
    let all = t.find("All clients: (groupid=0, jobs=2)").unwrap();
    assert!(pa < pb && pb < all, "{t}");
    let tail = &t[all..];
    assert!(tail.contains("clat percentiles (usec)") || tail.contains("clat percentiles (nsec)"), "{tail}");
    assert!(tail.contains("KiB/s (") || tail.contains("MiB/s ("), "units on the All clients line: {tail}");
    assert!(tail.contains("\nHosts: 2 ok, 0 failed; start skew "), "{tail}");
}

/// Four hosts, terse, named with --hosts: one line per host job, then the All clients line
/// with its percentiles filled in.
#[test]
fn four_hosts_terse() {
    let dir = scratch();
    let s: Vec<Server> = (0..4).map(|_| fiox_server(dir.path(), &[], &[])).collect();
    let hosts = s.iter().map(|s| format!("127.0.0.1:{}", s.port)).collect::<Vec<_>>().join(",");
    let j = job(dir.path(), "t", 1);
    let (o, _) = coordinate(dir.path(), &[format!("--hosts={hosts}"), "--minimal".into(), j]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", o.stdout);
    assert!(lines[..4].iter().all(|l| l.split(';').nth(2) == Some("t")));
    let all: Vec<&str> = lines[4].split(';').collect();
    assert_eq!(all[2], "All clients");
    // Terse fields 6-9: read KiB, bandwidth, IOPS, runtime. The KiB add up exactly; the merged
    // bandwidth is the KiB over the longest host's runtime (as in fio), so it equals the
    // hosts' sum only when they ran equally long, which a loaded machine does not promise.
    let field = |l: &str, i: usize| l.split(';').nth(i).unwrap().parse::<u64>().unwrap();
    let kib: u64 = lines[..4].iter().map(|l| field(l, 5)).sum();
    assert_eq!(field(lines[4], 5), kib, "total read KiB");
    let longest = lines[..4].iter().map(|l| field(l, 8)).max().unwrap();
    assert_eq!(field(lines[4], 8), longest, "the longest runtime");
    let bw = field(lines[4], 6) as f64;
    assert!((bw - kib as f64 * 1000.0 / longest as f64).abs() <= 1.0, "bandwidth {bw}: {}", lines[4]);
    // The clat percentile fields are the merged ones (fio 3.33 prints `0%=0` placeholders).
    assert!(all.iter().any(|f| f.starts_with("50.000000%=")), "{}", lines[4]);
    assert!(all.iter().filter(|f| f.starts_with("99.")).any(|f| !f.ends_with("=0")), "{}", lines[4]);
}

/// A server killed with SIGKILL mid-run is reported within 2 s; its last interval report is
/// kept and flagged, All clients is labelled degraded, the exit status is 1.
#[test]
fn killed_host_is_reported_with_partial_results() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let j = job(dir.path(), "k", 4);
    let pid = b.pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2000));
        Command::new("kill").args(["-9", &pid]).status().unwrap();
    });
    let (o, secs) = coordinate(dir.path(), &args(&["--output-format=json"], client_args(&[&a, &b], &j)));
    killer.join().unwrap();
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(secs < 4.0 + 4.0, "took {secs} s");
    assert!(o.stderr.contains(&format!("host {}: lost", b.addr())), "{}", o.stderr);
    let d: Value = serde_json::from_str(&o.stdout).unwrap();
    let h = &d["fiox"]["hosts"][1];
    assert_eq!((h["status"].as_str(), h["partial"].as_u64()), (Some("failed"), Some(1)));
    // Started about 0.3 s after the coordinator; lost about 2 s in, found within 2 s.
    let at = h["failed_at_s"].as_f64().unwrap();
    assert!(at > 0.5 && at < 2.0 + 2.0, "failed at {at} s");
    assert_eq!(d["fiox"]["degraded"], 1);
    let cs = d["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "the lost host's partial entry is kept");
    assert!(cs[1]["read"]["io_bytes"].as_u64().unwrap() > 0);
    assert_eq!(cs[2]["jobname"], "All clients");
}

/// A stopped server (SIGSTOP: its connection stays up, it says nothing) is lost after
/// --host-timeout, also with no status output at all; the run does not hang.
#[test]
fn stopped_host_times_out_without_status_output() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let j = job(dir.path(), "s", 4);
    let pid = b.pid();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    });
    let (o, secs) = coordinate(dir.path(), &args(&["--eta=never", "--host-timeout=2"], client_args(&[&a, &b], &j)));
    stopper.join().unwrap();
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("no message for") && o.stderr.contains("--host-timeout=2000ms"), "{}", o.stderr);
    assert!(secs < 4.0 + 3.0, "took {secs} s");
    let t = &o.stdout;
    let line = t.lines().find(|l| l.starts_with("All clients (degraded: 1 of 2 hosts complete")).expect(t);
    assert!(line.contains("failed at"), "{line}");
    let failed_at: f64 = line.split("failed at ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(failed_at < 1.5 + 2.0 + 2.0, "detected at {failed_at} s");
    assert!(t.contains(&format!("<{}> (partial: lost", b.addr())), "{t}");
}

/// One run at a time: a second coordinator is refused with the first one's run named; a
/// coordinator killed mid-run frees the server at once (its connection ends).
#[test]
fn busy_server_and_dead_coordinator() {
    let dir = scratch();
    let s = fiox_server(dir.path(), &[], &[]);
    let j = job(dir.path(), "b", 3);
    let mut first = Command::new(fiox_bin())
        .args([format!("--client={}", s.addr()), j.clone()])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", s.addr()), j.clone()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("busy: run ") && o.stderr.contains(" from "), "{}", o.stderr);
    first.kill().unwrap();
    first.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let short = job(dir.path(), "c", 1);
    let (o, secs) = coordinate(dir.path(), &[format!("--client={}", s.addr()), short]);
    assert_eq!(o.code, 0, "the server is free again: {}", o.stderr);
    assert!(secs < 4.0);
}

/// Version skew (the FIOX_TEST_PROTO hook): both ranges named; a server whose range includes
/// the coordinator's version (one behind) works.
#[test]
fn version_skew_is_named_on_both_sides() {
    let dir = scratch();
    let newer = fiox_server(dir.path(), &[], &[("FIOX_TEST_PROTO", "2")]);
    let window = fiox_server(dir.path(), &[], &[("FIOX_TEST_PROTO", "1..2")]);
    let j = job(dir.path(), "v", 1);
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", newer.addr()), j.clone()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("server speaks 2..=2") && o.stderr.contains("coordinator speaks 1..=1"), "{}", o.stderr);
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", window.addr()), j]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// exec_prerun is refused by a server without --allow-exec (nothing runs), allowed with it.
#[test]
fn commands_need_the_servers_consent() {
    let dir = scratch();
    let (strict, open) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &["--allow-exec"], &[]));
    let mark = dir.path().join("ran");
    let jf = dir.path().join("e.fio");
    std::fs::write(&jf, format!("[e]\nioengine=null\nsize=1m\nexec_prerun=touch {}\n", mark.display())).unwrap();
    let jf = jf.display().to_string();
    let (o, _) = coordinate(
        dir.path(),
        &[format!("--client={}", strict.addr()), jf.clone(), format!("--client={}", open.addr()), jf.clone()],
    );
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("exec_prerun runs a command, which this server refuses"), "{}", o.stderr);
    assert!(o.stderr.contains("no host started"));
    assert!(!mark.exists(), "nothing ran anywhere");
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", open.addr()), jf]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(mark.exists());
}

/// fio 3.33's client against a fiox server gets a clear line and exits non-zero; fiox's
/// coordinator against a fio server names it. Neither hangs.
#[test]
fn fio_interop_both_directions() {
    let dir = scratch();
    let ours = fiox_server(dir.path(), &[], &[]);
    let theirs = fio_server(dir.path());
    let j = job(dir.path(), "f", 1);
    let t = Instant::now();
    let o = crate::util::fio_within(dir.path(), &[&format!("--client={}", ours.addr()), &j], 30);
    assert_ne!(o.code, 0);
    assert!(o.stdout.contains("this is a fiox server"), "{} {}", o.stdout, o.stderr);
    assert!(t.elapsed() < Duration::from_secs(10));
    let (o, secs) = coordinate(dir.path(), &[format!("--client={}", theirs.addr()), j]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("this is a fio server (fio protocol version 97), not a fiox server"), "{}", o.stderr);
    assert!(secs < 10.0);
}

/// One clear line per problem, before anything runs: a host without a job (fio drops it
/// silently), a host listed twice, an empty hosts file, an unreachable host, a non-loopback
/// address without credentials (TLS needed: the message names the switches).
#[test]
fn bad_host_lists() {
    let dir = scratch();
    let s = fiox_server(dir.path(), &[], &[]);
    let j = job(dir.path(), "h", 1);
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", s.addr()), "--client=127.0.0.1,9".into(), j.clone()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains(&format!("host '{}' has no job", s.addr())), "{}", o.stderr);
    let (o, _) = coordinate(
        dir.path(),
        &[format!("--hosts={},{}", s.addr().replace(',', ":"), s.addr().replace(',', ":")), j.clone()],
    );
    assert!(o.stderr.contains("is listed twice"), "{}", o.stderr);
    let empty = dir.path().join("hosts");
    std::fs::write(&empty, "# none\n").unwrap();
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", empty.display()), j.clone()]);
    assert!(o.stderr.contains("names no host"), "{}", o.stderr);
    let dead = free_port();
    let (o, secs) = coordinate(dir.path(), &[format!("--client=127.0.0.1,{dead}"), j.clone()]);
    assert_eq!(o.code, 1);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains(&format!("host 127.0.0.1,{dead}: cannot connect: Connection refused")), "{}", o.stderr);
    assert!(secs < 3.0);
    let (o, _) = coordinate(dir.path(), &["--client=192.0.2.1".into(), j.clone()]);
    assert!(o.stderr.contains("not a loopback address") && o.stderr.contains("--auth-key=FILE"), "{}", o.stderr);
    let (o, _) = coordinate(dir.path(), &["--server=ip:0.0.0.0,18999".into()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("TLS needs credentials") && o.stderr.contains("--tls-ca"), "{}", o.stderr);
    // A bad job is reported once, from the coordinator, before any connection.
    let bad = dir.path().join("bad.fio");
    std::fs::write(&bad, "[b]\nbs=q4\n").unwrap();
    let (o, _) = coordinate(dir.path(), &[format!("--client={}", s.addr()), bad.display().to_string()]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains(&format!("host {}:", s.addr())) && o.stderr.contains("bs"), "{}", o.stderr);
}

/// A unix-socket server: the socket is private (0600) and a run over it works.
#[test]
fn unix_socket_server() {
    let dir = scratch();
    let sock = dir.path().join("fiox.sock");
    let child = Command::new(fiox_bin())
        .arg(format!("--server=sock:{}", sock.display()))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _guard = Server { child, port: 0 };
    let until = Instant::now() + Duration::from_secs(5);
    while !sock.exists() {
        assert!(Instant::now() < until);
        std::thread::sleep(Duration::from_millis(20));
    }
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777, 0o600);
    let j = job(dir.path(), "u", 1);
    let (o, _) =
        coordinate(dir.path(), &["--output-format=json".into(), format!("--client=sock:{}", sock.display()), j]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let d: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(d["fiox"]["hosts"][0]["transport"], "unix");
    // One host: no All clients, as fio.
    assert_eq!(d["client_stats"].as_array().unwrap().len(), 1);
}

/// fio 3.33's own client and servers on loopback, against fiox's, on the same jobs: the JSON
/// layout (top-level keys, each client_stats entry's keys in order) is fio's, plus fiox's
/// `fiox` object (docs/fio-observed/multihost.md lists the differences).
#[test]
fn json_layout_matches_fio_client() {
    let dir = scratch();
    // Unpaced (a paced job's report has fiox's intended latency, which fio's has not), and
    // short (64 MiB of null I/O, not a time: the other tests' timings share the CPU).
    let j = dir.path().join("d.fio");
    std::fs::write(&j, "[global]\nioengine=null\nsize=64m\n[d]\nrw=randread\nbs=4k\n").unwrap();
    let j = j.display().to_string();
    let (f1, f2) = (fio_server(dir.path()), fio_server(dir.path()));
    let o = crate::util::fio_within(
        dir.path(),
        &args(&["--output-format=json"], client_args(&[&f1, &f2], &j)).iter().map(String::as_str).collect::<Vec<_>>(),
        60,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let fio = crate::util::json(&o);
    let (x1, x2) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let (o, _) = coordinate(dir.path(), &args(&["--output-format=json"], client_args(&[&x1, &x2], &j)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let ours: Value = serde_json::from_str(&o.stdout).unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let mut top = keys(&fio);
    top.push("fiox".into());
    assert_eq!(keys(&ours), top);
    let (fc, oc) = (fio["client_stats"].as_array().unwrap(), ours["client_stats"].as_array().unwrap());
    assert_eq!(fc.len(), oc.len());
    for (a, b) in fc.iter().zip(oc) {
        assert_eq!(a["jobname"], b["jobname"]);
        assert_eq!(keys(a), keys(b), "keys of {}", a["jobname"]);
        for d in ["read", "write"] {
            let (ka, kb) = (keys(&a[d]), keys(&b[d]));
            if a["jobname"] == "All clients" {
                // fiox adds the merged percentiles fio 3.33 leaves out; nothing else differs.
                assert_eq!(ka, kb);
                let (ca, cb) = (keys(&a[d]["clat_ns"]), keys(&b[d]["clat_ns"]));
                assert!(cb.starts_with(&ca), "{ca:?} {cb:?}");
            } else {
                assert_eq!(ka, kb);
            }
        }
    }
    assert_eq!(fio["global options"], ours["global options"].clone(), "one object, no repeated keys");
}

/// A coordinator that stops answering (SIGSTOP) is given up by its server after the host
/// timeout it asked for: the jobs stop and the server takes the next coordinator.
#[test]
fn silent_coordinator_frees_the_server() {
    let dir = scratch();
    let s = fiox_server(dir.path(), &[], &[]);
    let long = job(dir.path(), "l", 30);
    let child = Command::new(fiox_bin())
        .args(["--host-timeout=2".to_string(), format!("--client={}", s.addr()), long])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed (after SIGCONT) by PID however the test ends.
    let coord = Server { child, port: 0 };
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill").args(["-STOP", &coord.pid()]).status().unwrap();
    let t = Instant::now();
    let short = job(dir.path(), "s", 1);
    loop {
        let (o, _) = coordinate(dir.path(), &[format!("--client={}", s.addr()), short.clone()]);
        if o.code == 0 {
            break;
        }
        assert!(o.stderr.contains("busy"), "{}", o.stderr);
        assert!(
            t.elapsed() < Duration::from_secs(2 + 2),
            "server still busy {:?} after the coordinator stopped",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    drop(coord);
}

/// --on-host-failure=abort: a lost host stops the others, whose partial results are reported.
#[test]
fn abort_on_host_failure_stops_the_others() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let j = job(dir.path(), "a", 6);
    let pid = b.pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        Command::new("kill").args(["-9", &pid]).status().unwrap();
    });
    let (o, secs) =
        coordinate(dir.path(), &args(&["--output-format=json", "--on-host-failure=abort"], client_args(&[&a, &b], &j)));
    killer.join().unwrap();
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(secs < 4.5, "the survivor was stopped: {secs} s");
    let d: Value = serde_json::from_str(&o.stdout).unwrap();
    let survivor = &d["client_stats"][0];
    assert!(survivor["read"]["runtime"].as_u64().unwrap() < 4000, "{}", survivor["read"]);
    assert_eq!(d["fiox"]["hosts"][0]["status"], "ok");
    assert_eq!(d["fiox"]["hosts"][1]["status"], "failed");
}

/// --remote-config: the server reads the job from its own disk; --daemonize: the server runs
/// detached with its PID in the file, and a second one on the same file is refused.
#[test]
fn remote_config_and_daemonize() {
    let dir = scratch();
    let port = free_port();
    let pidfile = dir.path().join("server.pid");
    // The daemon's session log goes to syslog: a socket of the test's own stands in for /dev/log.
    let syslog_path = dir.path().join("log.sock");
    let syslog = std::os::unix::net::UnixDatagram::bind(&syslog_path).unwrap();
    syslog.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let o = Command::new(crate::util::fiox_bin())
        .args([&format!("--server=ip:127.0.0.1,{port}"), &format!("--daemonize={}", pidfile.display())])
        .env("FIOX_SYSLOG_SOCKET", &syslog_path)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
    struct Kill(String);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = Command::new("kill").args(["-9", &self.0]).status();
        }
    }
    let _guard = Kill(pid.clone());
    wait_listening(port);
    let o = crate::util::fiox(
        dir.path(),
        &[&format!("--server=ip:127.0.0.1,{}", free_port()), &format!("--daemonize={}", pidfile.display())],
    );
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains(&format!("names process {pid}, which is running")), "{}", o.stderr);
    let j = job(dir.path(), "r", 1);
    let (o, _) = coordinate(
        dir.path(),
        &[format!("--client=127.0.0.1,{port}"), format!("--remote-config={j}"), "--output-format=json".into()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let d: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(d["client_stats"][0]["jobname"], "r");
    // RFC 3164 datagrams (facility daemon, severity info) naming the session and its end.
    let mut lines = Vec::new();
    let mut buf = [0u8; 2048];
    while !lines.iter().any(|l: &String| l.contains(" done")) {
        let n = syslog.recv(&mut buf).expect("the daemon's log lines within 10 s");
        lines.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    let prefix = format!("<30>fiox[{pid}]: fiox server: ");
    assert!(lines.iter().all(|l| l.starts_with(&prefix)), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(": session for run ") && l.contains("127.0.0.1")), "{lines:?}");
}

/// --status-interval: a merged report per interval during the run (one JSON line each), then
/// the final document.
#[test]
fn status_interval_streams_merged_reports() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let j = job(dir.path(), "i", 3);
    let (o, _) =
        coordinate(dir.path(), &args(&["--output-format=json", "--status-interval=1"], client_args(&[&a, &b], &j)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&o.stdout).into_iter().map(Result::unwrap).collect();
    assert!(docs.len() >= 3, "{} documents", docs.len());
    let lines = o.stdout.lines().take_while(|l| l.starts_with("{\"")).count();
    assert_eq!(lines, docs.len() - 1, "interval reports are one line each");
    let bytes = |d: &Value| d["client_stats"].as_array().unwrap().last().unwrap()["read"]["io_bytes"].as_u64().unwrap();
    assert!(docs.windows(2).all(|w| bytes(&w[0]) <= bytes(&w[1])));
    assert!(docs[0]["fiox"]["hosts"].as_array().unwrap().iter().any(|h| h["status"] == "running"));
}

/// Files a job lays out under `directory=` on a server are named as fio 3.33's server names
/// them (`<client uid>.<name>`, `unique_filename`), and `$clientuid` in `filename_format`
/// likewise: the same names for the same job under both tools.
#[test]
fn shared_directory_names_match_fio() {
    let dir = scratch();
    let names = |server: &Server, fio_client: bool| -> Vec<String> {
        let d = dir.path().join(if fio_client { "fio" } else { "fiox" });
        std::fs::create_dir_all(&d).unwrap();
        let j = dir.path().join("u.fio");
        std::fs::write(
            &j,
            format!(
                "[u]\nioengine=psync\ndirectory={d}\nsize=64k\nrw=write\n[v]\nioengine=psync\nfilename_format={d}/x.$clientuid.$jobname\nsize=64k\nrw=write\n",
                d = d.display()
            ),
        )
        .unwrap();
        let a = [format!("--client={}", server.addr()), j.display().to_string()];
        let code = if fio_client {
            crate::util::fio_within(dir.path(), &[&a[0], &a[1]], 30).code
        } else {
            coordinate(dir.path(), &a).0.code
        };
        assert_eq!(code, 0);
        let mut v: Vec<String> =
            std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    };
    let fio = names(&fio_server(dir.path()), true);
    let ours = names(&fiox_server(dir.path(), &[], &[]), false);
    assert_eq!(fio, vec!["127.0.0.1.u.0.0".to_string(), "x.127.0.0.1.v".to_string()]);
    assert_eq!(ours, fio);
}

/// fiox's per-group merges: a stonewalled two-phase job gets one merge per phase across hosts
/// (fio's single "All clients" mixes the phases).
#[test]
fn per_group_merges_keep_phases_apart() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let j = dir.path().join("p.fio");
    std::fs::write(&j, "[global]\nioengine=null\nbs=4k\n[r]\nrw=read\nsize=8m\n[w]\nstonewall\nrw=write\nsize=4m\n")
        .unwrap();
    let j = j.display().to_string();
    let (o, _) = coordinate(dir.path(), &args(&["--output-format=json"], client_args(&[&a, &b], &j)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let d: Value = serde_json::from_str(&o.stdout).unwrap();
    let g = d["fiox"]["merged_groups"].as_array().unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!((g[0]["jobname"].as_str(), g[0]["groupid"].as_u64()), (Some("All clients, group 0"), Some(0)));
    assert_eq!(g[0]["read"]["io_bytes"].as_u64(), Some(16 << 20));
    assert_eq!(g[0]["write"]["io_bytes"].as_u64(), Some(0));
    assert_eq!(g[1]["write"]["io_bytes"].as_u64(), Some(8 << 20));
    let all = d["client_stats"].as_array().unwrap().last().unwrap();
    assert_eq!((all["read"]["io_bytes"].as_u64(), all["write"]["io_bytes"].as_u64()), (Some(16 << 20), Some(8 << 20)));
}

/// live_listen in a multi-host run: the coordinator serves the live page, a series per host
/// (from each host's interval reports) and `all` their sum, while the run goes.
#[test]
fn live_page_shows_a_multi_host_run() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let j = job(dir.path(), "l", 4);
    let port = free_port();
    let c = Command::new(fiox_bin())
        .args(args(&[&format!("--live_listen=127.0.0.1:{port}"), "--output-format=json"], client_args(&[&a, &b], &j)))
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    let body = crate::lab::metrics::get(port, "/live.json");
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&body.expect("the live page answers during the run")).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["state"], "running");
    let last = run["intervals"].as_array().unwrap().last().expect("an interval after 3 s").clone();
    let hosts = last["jobs"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names, [a.addr(), b.addr()]);
    let sum: u64 = hosts.iter().map(|h| h["ios"].as_u64().unwrap()).sum();
    assert!(hosts.iter().all(|h| h["ios"].as_u64().unwrap() > 0), "{last}");
    assert_eq!(last["all"]["ios"].as_u64(), Some(sum));
    // Paced at 4000 IOPS each: the page's rate is about 8000.
    let iops = last["all"]["iops"].as_f64().unwrap();
    assert!((6000.0..10000.0).contains(&iops), "{iops}");
}

/// A one-job command line for the server at `s`.
fn one_job(s: &Server, opts: &[&str]) -> Vec<String> {
    let mut a = vec![format!("--client={}", s.addr()), "--name=j".to_string()];
    a.extend(opts.iter().map(|o| o.to_string()));
    a
}

/// `--allow-path`: by default a server's jobs may open only what is under its working
/// directory; a file outside (by name, under `directory=`, from `filename_format`, through a
/// link, a log) is refused at prepare with the host, job, option and path named, and nothing
/// is created. A pattern lets a path in; a bad pattern stops the server at start.
#[test]
fn server_paths_are_limited_to_the_allow_list() {
    let dir = scratch();
    let (work, out) = (dir.path().join("work"), dir.path().join("out"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&out, work.join("link")).unwrap();
    let s = fiox_server(&work, &[], &[]);
    let o_ = out.display().to_string();
    let refused = [
        (vec![format!("--filename={o_}/a.dat")], "filename", format!("{o_}/a.dat")),
        (vec![format!("--directory={o_}")], "directory", format!("{o_}/127.0.0.1.j.0.0")),
        (vec![format!("--filename_format={o_}/$jobname.f")], "filename_format", format!("{o_}/j.f")),
        (vec!["--filename=link/b.dat".into()], "filename", format!("link/b.dat ({o_}/b.dat)")),
        (vec![format!("--write_bw_log={o_}/bw"), "--filename=in.dat".into()], "write_bw_log", format!("{o_}/bw")),
        // Named outright: refused before planning opens (or lists) anything.
        (vec![format!("--opendir={o_}")], "opendir", o_.clone()),
        (vec!["--filename=/dev/zero".into()], "filename", "/dev/zero".into()),
    ];
    for (extra, option, shown) in refused {
        let mut a = one_job(&s, &["--ioengine=psync", "--rw=write", "--size=64k"]);
        a.extend(extra);
        let (o, _) = coordinate(dir.path(), &a);
        assert_eq!(o.code, 1, "{}", o.stderr);
        let want = format!(
            "fiox: host {}: job 'j': {option}: '{shown}' is outside this server's --allow-path={} (the default: the server's working directory); refused before any I/O\n",
            s.addr(),
            std::fs::canonicalize(&work).unwrap().display()
        );
        assert_eq!(o.stderr, want);
        assert!(o.stdout.is_empty(), "{}", o.stdout);
        assert_eq!(crate::util::listing(&out), Vec::<String>::new(), "a file was made outside");
    }
    assert!(!work.join("in.dat").exists(), "a refused job laid out its file");
    // Under the working directory: runs.
    let (o, _) =
        coordinate(dir.path(), &one_job(&s, &["--ioengine=psync", "--rw=write", "--size=64k", "--filename=in.dat"]));
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    assert_eq!(std::fs::metadata(work.join("in.dat")).unwrap().len(), 64 << 10);
    // A pattern lets the other folder in (anything under a match), and only it.
    let a = format!("--allow-path={o_}/*.dat,{}", work.display());
    let s2 = fiox_server(&work, &[&a], &[]);
    let (o, _) = coordinate(
        dir.path(),
        &one_job(&s2, &["--ioengine=psync", "--rw=write", "--size=64k", &format!("--filename={o_}/a.dat")]),
    );
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let (o, _) = coordinate(
        dir.path(),
        &one_job(&s2, &["--ioengine=psync", "--rw=write", "--size=64k", &format!("--filename={o_}/a.txt")]),
    );
    assert!(
        o.code == 1 && o.stderr.contains(&format!("'{o_}/a.txt' is outside this server's --allow-path={o_}/*.dat,")),
        "{}",
        o.stderr
    );
    // Bad patterns: the server does not start.
    for (bad, why) in [("/x/[ab", "a '[' without its ']'"), ("/x,,/y", "an empty pattern in the list")] {
        let o = Command::new(fiox_bin())
            .args(["--server=ip:127.0.0.1,1", &format!("--allow-path={bad}")])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&o.stderr), format!("fiox: --allow-path={bad}: {why}\n"));
    }
}

/// `--readonly` on a server: jobs that write, or would lay out a file first, are refused at
/// prepare; a read job of an existing file runs.
#[test]
fn readonly_server_refuses_writes() {
    let dir = scratch();
    std::fs::write(dir.path().join("data"), vec![7u8; 256 << 10]).unwrap();
    let s = fiox_server(dir.path(), &["--readonly"], &[]);
    for (rw, extra, want) in [
        ("write", "--filename=data", "job 'j': rw=write writes, and this server is read-only (--readonly)"),
        ("randrw", "--filename=data", "job 'j': rw=randrw writes, and this server is read-only (--readonly)"),
        ("trim", "--filename=data", "job 'j': rw=trim writes, and this server is read-only (--readonly)"),
        ("read", "--filename=new", "job 'j': 'new' would be laid out (written) first (262144 bytes needed), and this server is read-only (--readonly)"),
    ] {
        let (o, _) = coordinate(dir.path(), &one_job(&s, &["--ioengine=psync", &format!("--rw={rw}"), "--size=256k", extra]));
        assert_eq!(o.code, 1, "{rw}: {}", o.stderr);
        assert_eq!(o.stderr, format!("fiox: host {}: {want}\n", s.addr()));
    }
    assert!(!dir.path().join("new").exists());
    assert_eq!(std::fs::read(dir.path().join("data")).unwrap(), vec![7u8; 256 << 10]);
    let (o, _) = coordinate(
        dir.path(),
        &one_job(&s, &["--ioengine=psync", "--rw=read", "--size=256k", "--filename=data", "--output-format=json"]),
    );
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["client_stats"][0]["read"]["io_bytes"], 256 << 10);
}

fn sha256(path: &Path, len: usize) -> String {
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; len];
    std::io::Read::read_exact(&mut f, &mut buf).unwrap();
    let mut c = Command::new("sha256sum").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(c.stdin.as_mut().unwrap(), &buf).unwrap();
    String::from_utf8_lossy(&c.wait_with_output().unwrap().stdout).into_owned()
}

/// A write to a loop device holding ext4 needs the job's allow_mounted_write=1 (a local run's
/// guard) and the server's own --allow-destructive: without the server's, the run is refused
/// and the device's contents are unchanged (checksum); with both, the job writes.
#[test]
fn destructive_writes_need_the_servers_consent() {
    let dev = match crate::util::LoopDev::new(16 << 20) {
        Ok(d) => d,
        Err(why) => skip!("no loop device: {why}"),
    };
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev.path).status();
    if !mkfs.is_ok_and(|s| s.success()) {
        skip!("mkfs.ext4 is not available");
    }
    let dir = scratch();
    let d = dev.path.display().to_string();
    let allow = format!("--allow-path={d}");
    let (strict, consenting) =
        (fiox_server(dir.path(), &[&allow], &[]), fiox_server(dir.path(), &[&allow, "--allow-destructive"], &[]));
    let before = sha256(&dev.path, 16 << 20);
    let job = |s: &Server, job_consents: bool| {
        let mut a =
            one_job(s, &["--ioengine=psync", "--rw=write", "--bs=64k", "--size=1m", &format!("--filename={d}")]);
        if job_consents {
            a.push("--allow_mounted_write=1".into());
        }
        coordinate(dir.path(), &a).0
    };
    let o = job(&strict, true);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        format!(
            "fiox: host {}: job 'j': refusing to write to '{d}': it holds an ext2/3/4 file system; the job's allow_mounted_write=1 is not enough on a server, which must consent too (start it with --allow-destructive)\n",
            strict.addr()
        )
    );
    let o = job(&consenting, false);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("it holds an ext2/3/4 file system; set allow_mounted_write=1"), "{}", o.stderr);
    assert_eq!(sha256(&dev.path, 16 << 20), before, "a refused job changed the device");
    let o = job(&consenting, true);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    assert_ne!(sha256(&dev.path, 16 << 20), before, "the consented job wrote");
}

/// Launcher join on loopback: servers dial the coordinator's --join address, ordered by the
/// launcher's rank (Slurm's, Open MPI's, PMI's), else by arrival; duplicate ranks, ranks past
/// the count and missing servers are clear errors within the bounded wait.
#[test]
fn launcher_join_orders_hosts_by_rank() {
    let dir = scratch();
    let port = free_port();
    // Each worker works in its own folder, whose file `data` is (rank + 1) x 64 KiB: the
    // bytes each host read show which worker it was.
    let spawn_worker = |work: &str, var: Option<(&str, &str)>| {
        let w = dir.path().join(work);
        std::fs::create_dir_all(&w).unwrap();
        let mut c = Command::new(fiox_bin());
        c.arg(format!("--server=join:127.0.0.1:{port}")).current_dir(&w).stdout(Stdio::null()).stderr(Stdio::null());
        if let Some((k, v)) = var {
            c.env(k, v);
            let r: u64 = v.parse().unwrap_or(0);
            std::fs::write(w.join("data"), vec![1u8; ((r + 1) * 65536) as usize]).unwrap();
        }
        c.spawn().unwrap()
    };
    let coord = |count: u32, timeout: &str, job: &[&str]| {
        let a = args(
            &[
                &format!("--join=127.0.0.1:{port}"),
                &format!("--join-count={count}"),
                &format!("--join-timeout={timeout}"),
                "--output-format=json",
                "--name=j",
            ],
            job.iter().map(|s| s.to_string()).collect(),
        );
        let d = dir.path().to_path_buf();
        std::thread::spawn(move || coordinate(&d, &a).0)
    };
    let file_job = ["--ioengine=psync", "--rw=read", "--bs=4k", "--filename=data"];
    // Ranks 2, 0, 1 from three launchers' variables, started before the coordinator listens.
    let mut workers = [
        spawn_worker("a", Some(("SLURM_PROCID", "2"))),
        spawn_worker("b", Some(("OMPI_COMM_WORLD_RANK", "0"))),
        spawn_worker("c", Some(("PMI_RANK", "1"))),
    ];
    std::thread::sleep(Duration::from_millis(300));
    let o = coord(3, "20s", &file_job).join().unwrap();
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    for h in v["fiox"]["hosts"].as_array().unwrap() {
        assert_eq!((h["transport"].as_str(), h["status"].as_str()), (Some("join"), Some("ok")), "{h}");
    }
    let cs = v["client_stats"].as_array().unwrap();
    let bytes: Vec<u64> = cs.iter().map(|h| h["read"]["io_bytes"].as_u64().unwrap()).collect();
    assert_eq!(bytes, [65536, 2 * 65536, 3 * 65536, 6 * 65536], "rank order, then All clients");
    assert_eq!(cs[3]["jobname"], "All clients");
    for w in &mut workers {
        assert!(w.wait().unwrap().success());
    }
    let null_job = ["--ioengine=null", "--rw=read", "--size=1m"];
    // Duplicate ranks.
    let c = coord(2, "10s", &null_job);
    let mut w = [spawn_worker("d", Some(("SLURM_PROCID", "1"))), spawn_worker("e", Some(("SLURM_PROCID", "1")))];
    let o = c.join().unwrap();
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        format!("fiox: --join=127.0.0.1:{port}: rank 1 joined twice (127.0.0.1 and 127.0.0.1, from SLURM_PROCID); no host ran anything\n")
    );
    for w in &mut w {
        assert_eq!(w.wait().unwrap().code(), Some(1));
    }
    // A rank past the count.
    let c = coord(1, "10s", &null_job);
    let mut w = spawn_worker("f", Some(("SLURM_PROCID", "4")));
    let o = c.join().unwrap();
    assert!(
        o.code == 1
            && o.stderr.contains("127.0.0.1 joined as rank 4, from SLURM_PROCID, past --join-count=1 (ranks 0 to 0)"),
        "{}",
        o.stderr
    );
    let _ = w.wait();
    // Missing servers: named when the bounded wait ends.
    let t = Instant::now();
    let c = coord(3, "1s", &null_job);
    let mut w = spawn_worker("g", Some(("SLURM_PROCID", "1")));
    let o = c.join().unwrap();
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        format!("fiox: --join=127.0.0.1:{port}: 1 of 3 servers joined within --join-timeout=1s (missing ranks: 0, 2); no host ran anything\n")
    );
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(w.wait().unwrap().code(), Some(1));
    // No ranks: arrival order.
    let c = coord(2, "10s", &null_job);
    let mut w = [spawn_worker("h", None), spawn_worker("i", None)];
    let o = c.join().unwrap();
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    for w in &mut w {
        assert!(w.wait().unwrap().success());
    }
}

/// The join switches' mistakes: one line, exit 1, nothing started.
#[test]
fn join_switch_errors() {
    let dir = scratch();
    for (a, want) in [
        (vec!["--server=join:nohost"], "fiox: --server=join:nohost: needs a port (HOST:PORT)\n"),
        (vec!["--server=join:sock:/x"], "fiox: --server=join:sock:/x: needs HOST:PORT (a TCP address and port)\n"),
        (vec!["--join=127.0.0.1:9", "--name=j", "--ioengine=null", "--size=1m"], "fiox: --join needs --join-count=N: how many servers the launcher starts\n"),
        (vec!["--join-count=0"], "fiox: --join-count=0: a number of servers from 1 to 4096\n"),
        (
            vec!["--join=127.0.0.1:9", "--join-count=1", "--hosts=h1", "--name=j", "--ioengine=null", "--size=1m"],
            "fiox: --join cannot be combined with --client, --hosts or --hosts-file: the hosts of a run either join or are listed\n",
        ),
        (vec!["--join=127.0.0.1:9", "--join-count=1"], "fiox: --join: no job for the servers that join: give job files or job options\n"),
        (
            vec!["--join-count=2", "--name=j", "--ioengine=null", "--size=1m"],
            "fiox: --join-count and --join-timeout go with --join (the coordinator's address for joining servers)\n",
        ),
        (
            vec!["--join=127.0.0.1:9", "--join-count=1", "--repeat-until=iops:5%", "--name=j", "--ioengine=null", "--size=1m"],
            "fiox: --repeat-until cannot go with --join: a joined server serves one run; list the hosts (--client, --hosts)\n",
        ),
        (
            vec!["--allow-path=/x", "--name=j", "--ioengine=null", "--size=1m"],
            "fiox: --allow-path goes with --server: it is what a server allows the jobs coordinators send\n",
        ),
        (
            vec!["--hosts=127.0.0.1:9", "--allow-destructive", "--name=j", "--ioengine=null", "--size=1m"],
            "fiox: --allow-destructive goes with --server: it is what a server allows the jobs coordinators send\n",
        ),
    ] {
        let o = crate::util::fiox(dir.path(), &a);
        assert_eq!((o.code, o.stderr.as_str()), (1, want), "{a:?}");
    }
    let o = Command::new(fiox_bin()).arg("--server=join:127.0.0.1:9").env("SLURM_PROCID", "x1").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stderr), "fiox: SLURM_PROCID=x1: not a rank (0, 1, 2, ...)\n");
    assert_eq!(o.status.code(), Some(1));
}

/// `--repeat-until` with hosts repeats the whole multi-host run, as a local run repeats: each
/// run's figure is the merged one, the hosts' header lines are printed once, the report is the
/// last run's with the summary, and a bound not met exits with 2.
#[test]
fn repeat_until_repeats_the_whole_fleet() {
    let dir = scratch();
    let (a, b) = (fiox_server(dir.path(), &[], &[]), fiox_server(dir.path(), &[], &[]));
    let p = dir.path().join("r.fio");
    std::fs::write(&p, "[r]\nioengine=null\nsize=16m\nbs=4k\nrw=read\nnumber_ios=2000\nrate_iops=20000\n").unwrap();
    let j = p.display().to_string();
    let (o, _) =
        coordinate(dir.path(), &args(&["--repeat-until=iops:50%", "--repeat-max=4"], client_args(&[&a, &b], &j)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "stderr: {}", o.stderr);
    let t = &o.stdout;
    assert_eq!(t.matches("hostname=").count(), 2, "the probe lines once: {t}");
    assert_eq!(t.matches("Starting 1 process").count(), 2, "{t}");
    assert_eq!(t.matches("All clients: (groupid=0, jobs=2)").count(), 1, "{t}");
    let line = t.lines().find(|l| l.starts_with("fiox repeat-until iops:50%: ")).unwrap_or_else(|| panic!("{t}"));
    assert!(line.starts_with("fiox repeat-until iops:50%: 3 runs, mean="), "{line}");
    // Each run's figure is the two hosts' IOPS together: twice one host's pace, never one's.
    let (o, _) = coordinate(
        dir.path(),
        &args(&["--repeat-until=lat:0.001%", "--repeat-max=3", "--output-format=json"], client_args(&[&a, &b], &j)),
    );
    let v: Value = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {} {}", o.stdout, o.stderr));
    let r = &v["fiox"]["repeat_until"];
    assert_eq!(
        (r["runs"].as_u64(), r["max_runs"].as_u64(), r["metric"].as_str()),
        (Some(3), Some(3), Some("lat")),
        "{r}"
    );
    assert_eq!(o.code, if r["met"] == 1 { 0 } else { 2 }, "{r} {}", o.stderr);
    let (o, _) =
        coordinate(dir.path(), &args(&["--repeat-until=iops:50%", "--output-format=json"], client_args(&[&a, &b], &j)));
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    for x in v["fiox"]["repeat_until"]["values"].as_array().unwrap() {
        let x = x.as_f64().unwrap();
        assert!((30_000.0..=44_000.0).contains(&x), "two hosts at 20,000 IOPS each: {x}");
    }
}
