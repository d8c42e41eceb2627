//! Faults made for real: a device slowed or stopped by blkio throttling (the kernel here loads no
//! modules, so no dm-delay or dm-error), interrupts mid-run. Each test compares fiox with fio
//! 3.33 where fio behaves sanely, and pins what fiox reports: the message, the counters kept,
//! the exit status, and that no run hangs past its bound.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{fio_bin, fiox_bin, LoopDev, Throttle};

/// A run started inside a throttled cgroup, so that only its I/O is slowed.
struct Run {
    child: Child,
    t0: Instant,
}

impl Run {
    fn start(bin: &Path, throttle: &Throttle, args: &[String]) -> Run {
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        let cmd = format!(
            "echo $$ > {}/cgroup.procs && exec {} --output-format=json {}",
            throttle.dir.display(),
            bin.display(),
            quoted.join(" ")
        );
        let child = Command::new("bash")
            .args(["-c", &cmd])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bash");
        Run { child, t0: Instant::now() }
    }

    /// Waits for the first byte of the report; returns how long it took.
    fn first_byte(&mut self) -> (Duration, u8) {
        let mut b = [0u8; 1];
        self.child.stdout.as_mut().unwrap().read_exact(&mut b).expect("a report");
        (self.t0.elapsed(), b[0])
    }

    /// The whole report and stderr once the process has exited.
    fn finish(mut self, first: u8) -> (serde_json::Value, String, i32) {
        let mut rest = String::new();
        self.child.stdout.take().unwrap().read_to_string(&mut rest).unwrap();
        let out = self.child.wait_with_output().unwrap();
        let json = serde_json::from_str(&format!("{}{rest}", first as char)).expect("one JSON document");
        (json, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap_or(-1))
    }

    fn signal(&self, sig: &str) {
        // bash exec'd the tool, so the child's pid is the tool's.
        let _ = Command::new("kill").args([sig, &self.child.id().to_string()]).status();
    }
}

fn job(dev: &Path, engine: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--name=t",
        &format!("--filename={}", dev.display()),
        "--rw=randread",
        &format!("--ioengine={engine}"),
        "--direct=1",
        "--time_based",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn reads(job: &serde_json::Value) -> (u64, u64) {
    (job["read"]["total_ios"].as_u64().unwrap(), job["read"]["drop_ios"].as_u64().unwrap())
}

/// Slow is not dead: a queue on a device that does 20 reads a second takes 0.4 s to drain after
/// the runtime. Both tools wait for it, report error 0 and drop nothing, and count about the
/// same I/Os.
#[test]
fn a_slow_device_is_waited_for_like_fio() {
    let dev = match LoopDev::new(64 << 20) {
        Ok(d) => d,
        Err(why) => return println!("skipped: no loop device: {why}"),
    };
    let throttle = match Throttle::new(&dev.path, "blkio.throttle.read_iops_device", 20) {
        Ok(t) => t,
        Err(why) => return println!("skipped: {why}"),
    };
    for engine in ["libaio", "io_uring"] {
        let args = job(&dev.path, engine, &["--iodepth=8", "--runtime=1"]);
        let mut counts = Vec::new();
        for bin in [fio_bin(), fiox_bin()] {
            let mut run = Run::start(&bin, &throttle, &args);
            let (_, first) = run.first_byte();
            let (json, stderr, code) = run.finish(first);
            let job = &json["jobs"][0];
            assert_eq!(code, 0, "{} {engine}: {stderr}", bin.display());
            assert_eq!(job["error"].as_u64(), Some(0), "{} {engine}", bin.display());
            let (ios, dropped) = reads(job);
            assert_eq!(dropped, 0, "{} {engine}: nothing is dropped on a slow device", bin.display());
            counts.push(ios);
            if bin == fiox_bin() {
                assert!(stderr.is_empty(), "fiox {engine}: a successful run leaves stderr empty: {stderr}");
            }
        }
        // About 20 reads a second over the second of runtime plus the drain; the first
        // second's burst and the throttle's granularity make both tools vary a little.
        let (f, x) = (counts[0] as f64, counts[1] as f64);
        assert!(x >= 10.0 && (x - f).abs() <= f.max(x) * 0.5, "{engine}: fio {f} I/Os, fiox {x}");
    }
}

/// A device that stops answering mid-run: reads complete for a second, then the throttle stops
/// them (one byte a second). The job is declared hung once nothing has completed for its
/// `hang_timeout`, and its report keeps what completed before. An asynchronous job is woken
/// and counts its in-flight I/O as dropped; a synchronous job stuck in the kernel is reported
/// from its last snapshot.
#[test]
fn a_device_that_stops_answering_is_reported_within_the_hang_bound() {
    for engine in ["libaio", "io_uring", "psync"] {
        // A fresh device per engine: the abandoned reads of one stay queued behind its throttle.
        let dev = match LoopDev::new(64 << 20) {
            Ok(d) => d,
            Err(why) => return println!("skipped: no loop device: {why}"),
        };
        let throttle = match Throttle::new(&dev.path, "blkio.throttle.read_bps_device", 0) {
            Ok(t) => t,
            Err(why) => return println!("skipped: {why}"),
        };
        let args = job(&dev.path, engine, &["--iodepth=8", "--runtime=60", "--hang_timeout=2"]);
        let mut run = Run::start(&fiox_bin(), &throttle, &args);
        std::thread::sleep(Duration::from_millis(1000));
        throttle.set(1);
        let stopped = run.t0.elapsed();
        let (after, first) = run.first_byte();
        // The kernel finishes the abandoned reads (and lets the process exit) once unthrottled.
        throttle.lift();
        let (json, stderr, code) = run.finish(first);
        let waited = (after - stopped).as_secs_f64();
        assert!(waited < 6.5, "{engine}: reported {waited:.1} s after the device stopped (hang_timeout=2)");
        assert!(waited >= 1.5, "{engine}: reported after {waited:.1} s, before the hang bound");
        let job = &json["jobs"][0];
        assert_eq!(job["error"].as_u64(), Some(110), "{engine}: a hung job reports ETIMEDOUT");
        assert_eq!(code, 1, "{engine}: a hung job fails the run");
        let (ios, dropped) = reads(job);
        assert!(ios > 0, "{engine}: what completed before the device stopped is kept");
        assert!(stderr.contains(&dev.path.display().to_string()), "{engine}: the message names the file: {stderr}");
        if engine == "psync" {
            assert!(stderr.contains("stuck in a system call"), "{engine}: {stderr}");
        } else {
            assert!(dropped > 0, "{engine}: in-flight I/Os count as dropped");
            assert!(stderr.contains("in flight") && stderr.contains("oldest issued"), "{engine}: {stderr}");
        }
    }
}

/// A stop request on a dead device ends the run 5 s after the last completion (not after the
/// full hang bound); a second one ends it at once. Either way the report is printed.
#[test]
fn interrupts_end_a_stalled_run_with_its_results() {
    for (signals, bound) in [(1, 8.0), (2, 3.0)] {
        let dev = match LoopDev::new(64 << 20) {
            Ok(d) => d,
            Err(why) => return println!("skipped: no loop device: {why}"),
        };
        let throttle = match Throttle::new(&dev.path, "blkio.throttle.read_bps_device", 0) {
            Ok(t) => t,
            Err(why) => return println!("skipped: {why}"),
        };
        let args = job(&dev.path, "libaio", &["--iodepth=8", "--runtime=60"]);
        let mut run = Run::start(&fiox_bin(), &throttle, &args);
        std::thread::sleep(Duration::from_millis(1000));
        throttle.set(1);
        std::thread::sleep(Duration::from_millis(300));
        let t_int = Instant::now();
        run.signal("-INT");
        if signals == 2 {
            std::thread::sleep(Duration::from_millis(300));
            run.signal("-INT");
        }
        let (_, first) = run.first_byte();
        let waited = t_int.elapsed().as_secs_f64();
        throttle.lift();
        let (json, stderr, _) = run.finish(first);
        assert!(waited < bound, "{signals} interrupt(s): the report came {waited:.1} s later");
        let (ios, dropped) = reads(&json["jobs"][0]);
        assert!(ios > 0 && dropped > 0, "{signals} interrupt(s): {ios} I/Os kept, {dropped} dropped");
        if signals == 2 {
            assert!(stderr.contains("second interrupt"), "{stderr}");
        }
    }
}
