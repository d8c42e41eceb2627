//! The multi-host start barrier and its timing, for real: file layout done before the barrier,
//! hosts whose CLOCK_MONOTONIC is a day off (time namespaces) or whose wall clock is five
//! minutes off (libfaketime), a link with added delay or a stall (a delay proxy in this file),
//! and sixteen hosts at once. Every figure the assertions use is printed, so the test output
//! is also the measurement.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::netns::Topology;
use super::{coordinate, fiox_server, keyfile, Guard};
use crate::util::{fiox_bin, free_port, scratch, skip, wait_listening, Out};

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn doc(o: &Out) -> Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\nstderr: {}", o.stdout, o.stderr))
}

/// A host whose job reads a 512 MiB file that does not exist yet lays it out while it
/// prepares, before the barrier: the other host (null engine) starts its I/O only after that
/// layout ended, both start within a few ms of each other, and the layout is not in the
/// runtime.
#[test]
fn file_layout_happens_before_the_start_barrier() {
    let dir = scratch();
    let d = dir.path();
    let a = fiox_server(d, &[], &[]);
    let pa = a.port;
    let b = fiox_server(d, &[], &[]);
    let pb = b.port;
    let file = d.join("layout.dat");
    let common = "[global]\ntime_based\nruntime=1\nbs=64k\nrate=20m\n";
    std::fs::write(
        d.join("file.fio"),
        format!("{common}[lay]\nioengine=psync\nrw=read\nsize=512m\ninvalidate=0\nfilename={}\n", file.display()),
    )
    .unwrap();
    std::fs::write(d.join("null.fio"), format!("{common}[null]\nioengine=null\nrw=read\nsize=256m\n")).unwrap();
    let args = strings(&[
        "--output-format=json",
        &format!("--client=127.0.0.1,{pa}"),
        "file.fio",
        &format!("--client=127.0.0.1,{pb}"),
        "null.fio",
    ]);
    let began = SystemTime::now();
    let (o, secs) = coordinate(d, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    let j = doc(&o);
    let hosts = j["fiox"]["hosts"].as_array().unwrap();
    let start = |i: usize| hosts[i]["job_start_ms"].as_i64().unwrap();
    let laid_out = epoch_ms(std::fs::metadata(&file).unwrap().modified().unwrap());
    let layout_ms = laid_out - epoch_ms(began);
    let skew = j["fiox"]["start_skew_ns"].as_u64().unwrap();
    println!(
        "layout took about {layout_ms} ms; job starts {} ms and {} ms after the layout ended; start skew {} us; runtimes {} ms, {} ms; run {secs:.2} s",
        start(0) - laid_out,
        start(1) - laid_out,
        skew / 1000,
        hosts[0]["runtime_ms"],
        hosts[1]["runtime_ms"]
    );
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 512 << 20);
    assert!(layout_ms >= 40, "the layout was too quick to show anything: {layout_ms} ms");
    // The null host waited for the other's layout: its I/O began after the file's last write.
    assert!(start(1) >= laid_out - 2, "the null host started before the layout ended");
    assert!((start(0) - start(1)).abs() <= 50, "job starts {} and {} ms", start(0), start(1));
    assert!(skew < 20_000_000, "start skew {skew} ns");
    for h in hosts {
        let rt = h["runtime_ms"].as_u64().unwrap();
        assert!((1000..1300).contains(&rt), "runtime {rt} ms counts the layout? {h}");
    }
    // The aggregate until the first host finished is there, and is about both hosts' rate.
    let fd = &j["fiox"]["first_done"];
    let bw = fd["read"]["bw_bytes"].as_u64().unwrap();
    assert!((30 << 20..=42 << 20).contains(&bw), "first-done read bandwidth {bw}: {fd}");
}

/// Forwards one TCP connection to `to`, delaying each direction by its own fixed amount
/// (every chunk is held until its arrival time plus the delay, so order and spacing are kept),
/// or holding everything while `stall` is set: a link with latency, or one gone silent, with
/// the connection itself alive.
struct DelayProxy {
    port: u16,
    stall: Arc<AtomicBool>,
}

impl DelayProxy {
    fn start(to: u16, up: Duration, down: Duration) -> DelayProxy {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let stall = Arc::new(AtomicBool::new(false));
        let st = stall.clone();
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(c) = c else { return };
                let Ok(s) = TcpStream::connect(("127.0.0.1", to)) else { return };
                let (c2, s2) = (c.try_clone().unwrap(), s.try_clone().unwrap());
                pipe(c, s2, up, st.clone());
                pipe(s, c2, down, st.clone());
            }
        });
        DelayProxy { port, stall }
    }
}

/// One direction: a reader stamping chunks, a writer sending each at its stamp plus `delay`.
fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration, stall: Arc<AtomicBool>) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    });
    std::thread::spawn(move || {
        for (due, chunk) in rx {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            while stall.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if to.write_all(&chunk).is_err() {
                return;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}

/// One host reached directly, one through 25 ms of delay each way: the run still starts
/// together (the offset is estimated from the shortest probe round trip, and the delays are
/// symmetric), and the reported round trip and error bound grow to the link's 50 ms. Then the
/// proxy stalls mid-run: heartbeats stop, and the host is lost within --host-timeout + 2 s.
#[test]
fn delayed_link_still_synchronises_and_a_stall_is_heartbeat_loss() {
    let dir = scratch();
    let d = dir.path();
    let a = fiox_server(d, &[], &[]);
    let pa = a.port;
    let b = fiox_server(d, &[], &[]);
    let pb = b.port;
    let delay = Duration::from_millis(25);
    let proxy = DelayProxy::start(pb, delay, delay);
    let job = ["--name=j", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=64m", "--rate_iops=4000"];
    let mut args = strings(&["--output-format=json", "--time_based", "--runtime=1"]);
    args.extend(strings(&job));
    args.extend([format!("--client=127.0.0.1,{pa}"), format!("--client=127.0.0.1,{}", proxy.port)]);
    let (o, secs) = coordinate(d, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j = doc(&o);
    let hosts = j["fiox"]["hosts"].as_array().unwrap();
    let rtt = |i: usize| hosts[i]["rtt_ns"].as_u64().unwrap();
    let skew = j["fiox"]["start_skew_ns"].as_u64().unwrap();
    let bound = j["fiox"]["skew_bound_ns"].as_u64().unwrap();
    println!(
        "direct rtt {} us, delayed rtt {} us; start skew {} us, bound {} us; run {secs:.2} s",
        rtt(0) / 1000,
        rtt(1) / 1000,
        skew / 1000,
        bound / 1000
    );
    assert!(rtt(0) < 10_000_000, "direct rtt {}", rtt(0));
    assert!((50_000_000..70_000_000).contains(&rtt(1)), "delayed rtt {}", rtt(1));
    assert!(bound >= 50_000_000, "the bound follows the slowest link: {bound}");
    assert!(skew < 5_000_000, "start skew {skew} ns");

    // The stall: 1.5 s into the run nothing passes either way any more.
    let b2 = fiox_server(d, &[], &[]);
    let pb2 = b2.port;
    let proxy = DelayProxy::start(pb2, delay, delay);
    let mut args = strings(&["--output-format=json", "--time_based", "--runtime=6", "--host-timeout=2"]);
    args.extend(strings(&job));
    args.extend([format!("--client=127.0.0.1,{pa}"), format!("--client=127.0.0.1,{}", proxy.port)]);
    let stall_at = Duration::from_millis(1500);
    let (o, secs) = std::thread::scope(|s| {
        let run = s.spawn(|| coordinate(d, &args));
        std::thread::sleep(stall_at);
        proxy.stall.store(true, Ordering::Relaxed);
        run.join().unwrap()
    });
    assert_eq!(o.code, 1, "{}", o.stderr);
    let j = doc(&o);
    let h = &j["fiox"]["hosts"][1];
    let at = h["failed_at_s"].as_f64().unwrap();
    println!("stalled at {:.1} s of the coordinator, host lost at {at:.2} s of the run; run {secs:.2} s", 1.5);
    assert_eq!(h["status"], "failed", "{h}");
    assert!(h["error"].as_str().unwrap().contains("no message for"), "{h}");
    assert!(at < stall_at.as_secs_f64() + 2.0 + 2.0, "lost at {at} s");
    assert_eq!(j["fiox"]["hosts"][0]["status"], "ok");
    proxy.stall.store(false, Ordering::Relaxed);
}

/// `fiox --server` in host `i`'s namespace with TLS, its command prefixed by `wrap` (unshare,
/// faketime), with `env`; waits until it listens.
fn ns_server(t: &Topology, i: usize, key: &Path, wrap: &[String], env: &[(&str, &str)]) {
    let work = t.dir.path().join(format!("srv-h{}", i + 1));
    std::fs::create_dir_all(&work).unwrap();
    let log = std::fs::File::create(t.dir.path().join(format!("srv-h{}.log", i + 1))).unwrap();
    let (program, rest) = match wrap.split_first() {
        Some((p, rest)) => (PathBuf::from(p), rest.to_vec()),
        None => (fiox_bin(), Vec::new()),
    };
    let mut c = t.cmd(&t.hosts[i].ns, program);
    c.args(rest);
    if !wrap.is_empty() {
        c.arg(fiox_bin());
    }
    c.arg(format!("--server=ip:{},8765", t.hosts[i].addr))
        .arg(format!("--auth-key={}", key.display()))
        .envs(env.iter().copied())
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    t.spawn(c);
    t.wait_listening(&t.coord, &t.hosts[i].addr, 8765, Duration::from_secs(10)).unwrap();
}

/// libfaketime's library, as Debian's `faketime` package installs it.
const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// Host 1's CLOCK_MONOTONIC a day ahead and host 2's behind (a day, or as far as this
/// machine's uptime allows: a time namespace's clock cannot go below zero), each in a time
/// namespace; host 3's wall clock 300 s behind under libfaketime. The start is still within
/// 5 ms, the reported monotonic offsets are the injected ones, and host 3's wall clock gives a
/// warning naming it and its offset (not a failure), with `wallclock_offset_ns` in the JSON.
#[test]
fn time_namespaces_and_a_wall_clock_off_by_five_minutes() {
    let missing: Vec<&str> = ["unshare", "faketime"]
        .into_iter()
        .filter(|c| !Command::new("sh").args(["-c", &format!("command -v {c}")]).status().is_ok_and(|s| s.success()))
        .collect();
    let missing: Vec<&str> =
        missing.into_iter().chain(Some(FAKETIME_LIB).filter(|lib| !Path::new(lib).exists())).collect();
    if !missing.is_empty() {
        skip!("{} not installed (scripts/test.sh installs them)", missing.join(", "));
    }
    // A kernel without time namespaces (CONFIG_TIME_NS) cannot run this test.
    if !Command::new("unshare").args(["-T", "-f", "--monotonic", "1", "true"]).status().is_ok_and(|s| s.success()) {
        skip!("time namespaces are not available (unshare -T failed)");
    }
    let t = match Topology::new(3) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let uptime: f64 =
        std::fs::read_to_string("/proc/uptime").unwrap().split_whitespace().next().unwrap().parse().unwrap();
    let ahead: i64 = 86_400;
    // A clock a time namespace moves back must stay positive for the whole test (a fresh CI
    // machine may have been up for minutes only): a minute of margin.
    let behind: i64 = 86_400.min(uptime as i64 - 60);
    if behind < 60 {
        skip!("just booted: up for {uptime} s only: no monotonic clock can be moved back");
    }
    let key = keyfile(t.dir.path(), "k.key");
    let timens = |s: i64| {
        let v = s.to_string();
        strings(&["unshare", "-T", "-f", "--monotonic", &v, "--boottime", &v])
    };
    ns_server(&t, 0, &key, &timens(ahead), &[]);
    ns_server(&t, 1, &key, &timens(-behind), &[]);
    // Only the wall clock moves: libfaketime leaves CLOCK_MONOTONIC alone when told so. The
    // library is preloaded directly rather than through the `faketime` wrapper, whose shared
    // memory segment outlives a server the test kills (a /dev/shm/faketime_shm_* per run).
    let preload = format!("LD_PRELOAD={FAKETIME_LIB}");
    ns_server(&t, 2, &key, &strings(&["env", &preload, "FAKETIME=-300s"]), &[("FAKETIME_DONT_FAKE_MONOTONIC", "1")]);
    let hosts: Vec<String> = t.hosts.iter().map(|h| h.addr.clone()).collect();
    let mut args = vec![format!("--hosts={}", hosts.join(",")), format!("--auth-key={}", key.display())];
    args.extend(strings(&[
        "--output-format=json",
        "--name=j",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--time_based",
        "--runtime=1",
        "--rate_iops=4000",
    ]));
    let mut c = t.cmd(&t.coord, "timeout");
    c.args(["-k", "2", "30"]).arg(fiox_bin()).args(&args).current_dir(t.dir.path());
    let o = Out::from(c.output().unwrap());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j = doc(&o);
    let hs = j["fiox"]["hosts"].as_array().unwrap();
    let off = |i: usize| hs[i]["clock_offset_ns"].as_i64().unwrap();
    let wall = |i: usize| hs[i]["wallclock_offset_ns"].as_i64().unwrap();
    let skew = j["fiox"]["start_skew_ns"].as_u64().unwrap();
    for (i, h) in hs.iter().enumerate() {
        println!(
            "host {}: monotonic offset {:+.6} s, wall-clock offset {:+.3} s, rtt {} us, start {} us, job start {} ms",
            i + 1,
            off(i) as f64 / 1e9,
            wall(i) as f64 / 1e9,
            h["rtt_ns"].as_u64().unwrap() / 1000,
            h["start_ns"].as_i64().unwrap() / 1000,
            h["job_start_ms"]
        );
    }
    println!("start skew {} us (injected +{ahead} s, -{behind} s, wall -300 s)", skew / 1000);
    assert!(skew <= 5_000_000, "start skew {skew} ns");
    // Each offset is the injected one, to within a few ms (half a probe round trip, and
    // scheduling on a busy machine).
    let near = |got: i64, want_s: i64, tol_ms: i64| (got - want_s * 1_000_000_000).abs() <= tol_ms * 1_000_000;
    assert!(near(off(0), ahead, 5), "host 1 offset {}", off(0));
    assert!(near(off(1), -behind, 5), "host 2 offset {}", off(1));
    assert!(near(off(2), 0, 5), "host 3 offset {}", off(2));
    assert!(near(wall(0), 0, 100) && near(wall(1), 0, 100), "wall offsets {} {}", wall(0), wall(1));
    assert!(near(wall(2), -300, 1000), "host 3 wall offset {}", wall(2));
    // One warning, naming the host and its offset; the run is not failed for it.
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(lines[0].starts_with(&format!("fiox: warning: host {}: its wall clock is -300", hosts[2])), "{}", o.stderr);
    // Job start times, brought to the coordinator's wall clock, agree despite the fake one.
    let starts: Vec<i64> = hs.iter().map(|h| h["job_start_ms"].as_i64().unwrap()).collect();
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(spread <= 50, "job starts {starts:?}");
}

/// Sixteen hosts (namespaces, TLS over the bridge), a 2 s null job each: the whole run,
/// connections and handshakes included, ends within runtime + 3 s; the coordinator's CPU time
/// and peak memory (from /proc, sampled while it runs) are printed.
#[test]
fn sixteen_hosts_within_runtime_plus_three_seconds() {
    const N: usize = 16;
    let t = match Topology::new(N) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let key = keyfile(t.dir.path(), "k.key");
    for i in 0..N {
        ns_server(&t, i, &key, &[], &[]);
    }
    let hosts: Vec<String> = t.hosts.iter().map(|h| h.addr.clone()).collect();
    let mut args = vec![format!("--hosts={}", hosts.join(",")), format!("--auth-key={}", key.display())];
    args.extend(strings(&[
        "--output-format=json",
        "--name=j",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--time_based",
        "--runtime=2",
        "--rate_iops=2000",
    ]));
    let mut c = t.cmd(&t.coord, fiox_bin());
    c.args(&args).current_dir(t.dir.path()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let began = Instant::now();
    let child = c.spawn().unwrap();
    let pid = child.id();
    // Read the pipes on their own threads so the coordinator never blocks on a full pipe.
    let mut guard = Guard(child);
    let mut so = guard.0.stdout.take().unwrap();
    let mut se = guard.0.stderr.take().unwrap();
    let outs = std::thread::spawn(move || {
        let (mut a, mut b) = (String::new(), String::new());
        let e = std::thread::spawn(move || {
            let _ = se.read_to_string(&mut b);
            b
        });
        let _ = so.read_to_string(&mut a);
        (a, e.join().unwrap())
    });
    let tick = clk_tck();
    let (mut cpu_ticks, mut hwm_kb) = (0u64, 0u64);
    let status = loop {
        if let Some(s) = guard.0.try_wait().unwrap() {
            break s;
        }
        assert!(began.elapsed() < Duration::from_secs(30), "the coordinator ran for 30 s");
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            let f: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
            // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
            if f.len() > 13 {
                cpu_ticks = f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
            }
        }
        if let Ok(st) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(v) = st.lines().find_map(|l| l.strip_prefix("VmHWM:")) {
                hwm_kb = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(hwm_kb);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let secs = began.elapsed().as_secs_f64();
    let (stdout, stderr) = outs.join().unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let j: Value = serde_json::from_str(&stdout).unwrap();
    let hs = j["fiox"]["hosts"].as_array().unwrap();
    assert_eq!(hs.len(), N);
    assert!(hs.iter().all(|h| h["status"] == "ok"), "{}", j["fiox"]);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs[N]["jobname"], "All clients");
    let skew = j["fiox"]["start_skew_ns"].as_u64().unwrap();
    println!(
        "{N} hosts: run {secs:.2} s (runtime 2 s); start skew {} us; coordinator CPU {:.2} s, peak RSS {} MiB (sampled every 20 ms)",
        skew / 1000,
        cpu_ticks as f64 / tick as f64,
        hwm_kb / 1024
    );
    assert!(secs < 2.0 + 3.0, "took {secs:.2} s");
}

/// Clock ticks per second for /proc's CPU times (getconf; 100 on Linux).
fn clk_tck() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100)
}

/// The status line of a multi-host run is one line for every host together, as fio's client
/// sums its servers' ETAs: with two hosts of one job each, fio 3.33's client and fiox both
/// print `Jobs: 2 (f=2)`; fiox's line then has both jobs' states, the progress, the summed
/// rates (each host paced at 4000 IOPS) and the time left, and a last line at 100%.
#[test]
fn status_line_merges_the_hosts() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(
        d.join("j.fio"),
        "[j]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\ntime_based\nruntime=3\nrate_iops=4000\n",
    )
    .unwrap();
    let lines = |stdout: &str| -> Vec<String> {
        stdout.split(['\r', '\n']).filter(|l| l.starts_with("Jobs: ")).map(|l| l.trim_end().to_string()).collect()
    };
    let a = fiox_server(d, &[], &[]);
    let pa = a.port;
    let b = fiox_server(d, &[], &[]);
    let pb = b.port;
    let args = strings(&[
        "--eta=always",
        "--eta-newline=500ms",
        &format!("--client=127.0.0.1,{pa}"),
        "j.fio",
        &format!("--client=127.0.0.1,{pb}"),
        "j.fio",
    ]);
    let (o, _) = coordinate(d, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let fx = lines(&o.stdout);
    println!("fiox: {fx:#?}");
    assert!(fx.len() >= 4, "{}", o.stdout);
    let running: Vec<&String> = fx.iter().filter(|l| l.starts_with("Jobs: 2 (f=2): [r(2)][")).collect();
    assert!(running.len() >= 3, "{fx:#?}");
    // Once both hosts stream, the summed rate is both hosts' 4000 IOPS.
    let iops: Vec<f64> = running
        .iter()
        .filter_map(|l| {
            let n = l.split("][r=").nth(2)?.split(" IOPS").next()?;
            n.strip_suffix('k').map_or(n.parse().ok(), |k| k.parse::<f64>().ok().map(|k| k * 1000.0))
        })
        .collect();
    assert!(iops.iter().any(|&n| (7000.0..=9000.0).contains(&n)), "{fx:#?}");
    assert_eq!(fx.iter().filter(|l| l.contains("[100.0%]")).count(), 1, "{fx:#?}");
    let last = fx.last().unwrap();
    assert!(last.starts_with("Jobs: 0 (f=0): [_(2)][100.0%]") && last.ends_with("[eta 00m:00s]"), "{last}");

    // fio 3.33's own client and servers on the same job.
    let fio_server = |port: u16| {
        let c = Command::new(crate::util::fio_bin())
            .arg(format!("--server=ip:127.0.0.1,{port}"))
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(port);
        Guard(c)
    };
    let (fa, fb) = (free_port(), free_port());
    let (_fa, _fb) = (fio_server(fa), fio_server(fb));
    let o = Command::new("timeout")
        .args(["-k", "2", "30"])
        .arg(crate::util::fio_bin())
        .args([
            "--eta=always",
            &format!("--client=127.0.0.1,{fa}"),
            "j.fio",
            &format!("--client=127.0.0.1,{fb}"),
            "j.fio",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    let fio = lines(&String::from_utf8_lossy(&o.stdout));
    println!("fio: {fio:#?}");
    assert!(fio.iter().any(|l| l.starts_with("Jobs: 2 (f=2)")), "{fio:#?}");
}
