//! Faults made for real: a device slowed or stopped by blkio throttling (the kernel here loads no
//! modules, so no dm-delay or dm-error), interrupts and SIGKILL mid-run, a full file system
//! (under the data or under a log), a file truncated or removed mid-run. Faults served by
//! nbdkit are in `faults::nbd`. Each test compares fiox with fio
//! 3.33 where fio behaves sanely, and pins what fiox reports: the message, the counters kept,
//! the exit status, and that no run hangs past its bound.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{fio_bin, fiox_bin, skip, LoopDev, Throttle};

/// A small tmpfs mounted at `dir/small`, unmounted when dropped (also when the test fails).
pub(crate) struct SmallFs(pub(crate) std::path::PathBuf);

impl SmallFs {
    /// `None` where no file system can be mounted (not root).
    pub(crate) fn mount(dir: &Path, size: &str) -> Option<SmallFs> {
        let mnt = dir.join("small");
        std::fs::create_dir(&mnt).ok()?;
        let opts = format!("size={size}");
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &opts, "tmpfs"]).arg(&mnt).status();
        ok.is_ok_and(|s| s.success()).then_some(SmallFs(mnt))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

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

/// A fresh 64 MiB loop device whose reads a blkio cgroup throttles (`value` 0: not yet). A
/// fresh one per run: abandoned reads of an earlier run stay queued behind its throttle. The
/// throttle is lifted (field order) before the device is detached.
struct Throttled {
    throttle: Throttle,
    dev: LoopDev,
}

fn throttled(rule: &'static str, value: u64) -> Result<Throttled, String> {
    let dev = LoopDev::new(64 << 20).map_err(|why| format!("no loop device: {why}"))?;
    let throttle = Throttle::new(&dev.path, rule, value)?;
    Ok(Throttled { throttle, dev })
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
    let t = match throttled("blkio.throttle.read_iops_device", 20) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let (dev, throttle) = (&t.dev, &t.throttle);
    for engine in ["libaio", "io_uring"] {
        let args = job(&dev.path, engine, &["--iodepth=8", "--runtime=1"]);
        let mut counts = Vec::new();
        for bin in [fio_bin(), fiox_bin()] {
            let mut run = Run::start(&bin, throttle, &args);
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
        let t = match throttled("blkio.throttle.read_bps_device", 0) {
            Ok(t) => t,
            Err(why) => skip!("{why}"),
        };
        let (dev, throttle) = (&t.dev, &t.throttle);
        // A synchronous engine runs at depth 1 (with iodepth=8 fio's "queue depth will be
        // capped at 1" note would come first on stdout, before the report this test times).
        let depth = if engine == "psync" { "--iodepth=1" } else { "--iodepth=8" };
        let args = job(&dev.path, engine, &[depth, "--runtime=60", "--hang_timeout=2"]);
        let mut run = Run::start(&fiox_bin(), throttle, &args);
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

/// A stop request (SIGINT or SIGTERM) on a dead device ends the run 5 s after the last
/// completion (not after the full hang bound); a second one ends it at once. Either way the
/// report is printed.
#[test]
fn interrupts_end_a_stalled_run_with_its_results() {
    for (signals, bound, sig) in [(1, 8.0, "-INT"), (2, 3.0, "-INT"), (1, 8.0, "-TERM")] {
        let t = match throttled("blkio.throttle.read_bps_device", 0) {
            Ok(t) => t,
            Err(why) => skip!("{why}"),
        };
        let (dev, throttle) = (&t.dev, &t.throttle);
        let args = job(&dev.path, "libaio", &["--iodepth=8", "--runtime=60"]);
        let mut run = Run::start(&fiox_bin(), throttle, &args);
        std::thread::sleep(Duration::from_millis(1000));
        throttle.set(1);
        std::thread::sleep(Duration::from_millis(300));
        let t_int = Instant::now();
        run.signal(sig);
        if signals == 2 {
            std::thread::sleep(Duration::from_millis(300));
            run.signal(sig);
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

/// A file system that fills up mid-write: both tools stop with ENOSPC (28), keep the bytes
/// written before it and exit with status 1.
#[test]
fn a_full_file_system_stops_the_job_with_its_bytes_like_fio() {
    let dir = crate::util::scratch();
    let Some(fs) = SmallFs::mount(dir.path(), "8m") else {
        skip!("cannot mount a tmpfs");
    };
    let mnt = fs.0.clone();
    let file = mnt.join("f");
    let name = format!("--filename={}", file.display());
    let args = ["--output-format=json", "--name=fill", &name, "--size=16m", "--rw=write", "--bs=64k"];
    let mut seen = Vec::new();
    for fiox in [false, true] {
        let _ = std::fs::remove_file(&file);
        let out = if fiox { crate::util::fiox(dir.path(), &args) } else { crate::util::fio(dir.path(), &args) };
        let doc: serde_json::Value = serde_json::from_str(&out.stdout[out.stdout.find('{').unwrap()..]).unwrap();
        let job = &doc["jobs"][0];
        seen.push((out.code, job["error"].as_u64(), job["write"]["io_bytes"].as_u64().unwrap()));
        if fiox {
            assert!(out.stderr.contains("No space left on device: write offset="), "{}", out.stderr);
        }
    }
    let (f, x) = (seen[0], seen[1]);
    assert_eq!((x.0, x.1), (f.0, f.1), "exit status and error: fio {f:?}, fiox {x:?}");
    assert_eq!(x.1, Some(28));
    assert!(x.2 >= 6 << 20 && x.2.abs_diff(f.2) <= 1 << 20, "bytes kept: fio {}, fiox {}", f.2, x.2);
}

/// A file truncated under a reading job: the reads that find nothing are errors (EIO), not
/// successes, with psync (as fio) and libaio (where fio 3.33 counts empty reads as I/O done).
#[test]
fn a_file_truncated_mid_run_is_an_error() {
    for engine in ["psync", "libaio"] {
        let dir = crate::util::scratch();
        let file = dir.path().join("f");
        std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
        let name = format!("--filename={}", file.display());
        let engine_arg = format!("--ioengine={engine}");
        let args = [
            "--output-format=json",
            "--name=t",
            &name,
            "--rw=read",
            "--bs=64k",
            "--time_based",
            "--runtime=3",
            "--rate=8m",
            &engine_arg,
        ];
        let child = Command::new(fiox_bin())
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(800));
        std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(0).unwrap();
        let out = child.wait_with_output().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let job = &doc["jobs"][0];
        assert_eq!(job["error"].as_u64(), Some(5), "{engine}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{engine}");
        assert!(job["read"]["io_bytes"].as_u64().unwrap() > 0, "{engine}: the reads before are kept");
    }
}

/// A log on a disk that fills up: fio writes its logs at the end, cut off mid-line, says
/// nothing and exits 0. fiox keeps the job's results whole, cuts the log back to its last whole
/// line, names the file and the error, and fails the run.
#[test]
fn a_log_on_a_full_disk_is_reported_and_the_results_are_kept() {
    let dir = crate::util::scratch();
    let Some(fs) = SmallFs::mount(dir.path(), "1m") else {
        skip!("cannot mount a tmpfs");
    };
    let mnt = fs.0.clone();
    let prefix = format!("--write_lat_log={}", mnt.join("lat").display());
    let args = ["--output-format=json", "--name=j", "--ioengine=null", "--size=1g", "--rw=randread", &prefix];
    for fiox in [false, true] {
        for f in std::fs::read_dir(&mnt).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
        let out = if fiox { crate::util::fiox(dir.path(), &args) } else { crate::util::fio(dir.path(), &args) };
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON document");
        let job = &doc["jobs"][0];
        assert_eq!(job["read"]["total_ios"].as_u64(), Some(262144), "fiox {fiox}: every I/O is reported");
        assert_eq!(job["error"].as_u64(), Some(0), "fiox {fiox}: the I/O itself did not fail");
        let lat = std::fs::read(mnt.join("lat_lat.1.log")).unwrap();
        if !fiox {
            assert_eq!((out.code, out.stderr.as_str()), (0, ""), "fio is silent");
            continue;
        }
        assert_eq!(out.code, 1, "a log that could not be written fails the run");
        let want = format!("cannot write log file '{}': No space left on device", mnt.join("lat_lat.1.log").display());
        assert!(out.stderr.contains(&want), "{}", out.stderr);
        assert!(!lat.is_empty() && lat.ends_with(b"\n"), "the log ends on a whole line");
        for line in String::from_utf8(lat).unwrap().lines() {
            assert_eq!(line.split(", ").count(), 5, "{line:?}");
        }
    }
}

/// A file removed mid-run is still open: both tools go on to the end of the runtime without an
/// error, and nothing creates the file again.
#[test]
fn a_file_removed_mid_run_is_read_to_the_end_like_fio() {
    let mut counts = Vec::new();
    for bin in [fio_bin(), fiox_bin()] {
        let dir = crate::util::scratch();
        let file = dir.path().join("f");
        let name = format!("--filename={}", file.display());
        let args =
            ["--output-format=json", "--name=t", &name, "--size=16m", "--rw=randrw", "--time_based", "--runtime=2"];
        let child = Command::new(&bin)
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while std::fs::metadata(&file).map_or(0, |m| m.len()) < 16 << 20 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(700));
        std::fs::remove_file(&file).unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let doc: serde_json::Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
        let job = &doc["jobs"][0];
        let who = bin.display();
        assert_eq!((out.status.code(), job["error"].as_u64()), (Some(0), Some(0)), "{who}");
        assert!(job["job_runtime"].as_u64().unwrap() >= 1990, "{who}: the job runs its course");
        assert!(!file.exists(), "{who}: the removed file is not made again");
        counts.push(job["write"]["total_ios"].as_u64().unwrap() as f64);
    }
    let (f, x) = (counts[0], counts[1]);
    assert!(x > f / 3.0 && x < f * 3.0, "writes: fio {f}, fiox {x}");
}

/// SIGKILL mid-run: no report can be printed, but fiox's logs are on disk up to the last
/// second, in whole lines (fio keeps its logs in memory and loses them all).
#[test]
fn a_killed_run_keeps_its_logs_up_to_the_last_second() {
    for bin in [fio_bin(), fiox_bin()] {
        let dir = crate::util::scratch();
        let args = [
            "--name=j",
            "--ioengine=null",
            "--size=16m",
            "--rw=randread",
            "--rate_iops=1000",
            "--time_based",
            "--runtime=30",
            "--write_lat_log=k",
        ];
        let mut child = Command::new(&bin)
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(3000));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
        let log = std::fs::read_to_string(dir.path().join("k_clat.1.log")).unwrap_or_default();
        if bin == fio_bin() {
            assert!(log.is_empty(), "fio wrote its log after all: a stronger baseline for this test");
            continue;
        }
        assert!(log.ends_with('\n'), "whole lines only");
        let last_ms: u64 = log.lines().last().unwrap().split(',').next().unwrap().parse().unwrap();
        let lines = log.lines().count();
        // Killed 3 s in: the log holds at least the first 1.5 s (1,000 I/Os a second).
        assert!(last_ms >= 1500 && lines >= 1400, "{lines} lines, the last at {last_ms} ms");
    }
}

/// A stop request during the first of two groups: the second group never starts, and both tools
/// still list its job, with nothing done, in the report (exit status 128).
#[test]
fn jobs_that_never_started_are_listed_like_fio() {
    let dir = crate::util::scratch();
    let jobfile = dir.path().join("two.fio");
    let job = "ioengine=null\nsize=1g\ntime_based\n";
    std::fs::write(&jobfile, format!("[A]\n{job}runtime=5\n[B]\nstonewall\n{job}runtime=2\n")).unwrap();
    let mut seen = Vec::new();
    for bin in [fio_bin(), fiox_bin()] {
        let child = Command::new(&bin)
            .arg(&jobfile)
            .arg("--output-format=json")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let doc: serde_json::Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
        let jobs: Vec<(String, u64, bool)> = doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                let ran = j["read"]["total_ios"].as_u64().unwrap() > 0;
                (j["jobname"].as_str().unwrap().to_string(), j["groupid"].as_u64().unwrap(), ran)
            })
            .collect();
        seen.push((out.status.code(), jobs));
    }
    assert_eq!(seen[1], seen[0], "fiox, then fio");
    assert_eq!(seen[1], (Some(128), vec![("A".into(), 0, true), ("B".into(), 1, false)]));
}
