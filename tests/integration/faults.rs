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
        Err(why) => return println!("skipped: {why}"),
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
            Err(why) => return println!("skipped: {why}"),
        };
        let (dev, throttle) = (&t.dev, &t.throttle);
        let args = job(&dev.path, engine, &["--iodepth=8", "--runtime=60", "--hang_timeout=2"]);
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
            Err(why) => return println!("skipped: {why}"),
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

/// A 4 MiB disk whose reads of bytes 2 MiB to 2.25 MiB fail with EIO (four 64 KiB blocks),
/// served by nbdkit's eval plugin and exposed as a file by nbdfuse; everything is stopped and
/// removed when dropped, also when the test fails.
struct EioDisk {
    dir: tempfile::TempDir,
    nbdkit: Option<Child>,
    fuse: Option<Child>,
}

impl EioDisk {
    const BAD: (u64, u64) = (2 << 20, (2 << 20) + (256 << 10));

    fn start() -> Result<EioDisk, String> {
        for tool in ["nbdkit", "nbdfuse"] {
            if Command::new(tool).arg("--version").output().is_err() {
                return Err(format!("{tool} is not installed"));
            }
        }
        let dir = crate::util::scratch();
        let sock = dir.path().join("sock");
        let (lo, hi) = EioDisk::BAD;
        let pread = format!(
            "if [ $4 -lt {hi} ] && [ $(($4+$3)) -gt {lo} ]; then echo 'EIO planted' >&2; exit 1; fi; head -c $3 /dev/zero"
        );
        let nbdkit = Command::new("nbdkit")
            .args(["--foreground", "-U"])
            .arg(&sock)
            .args(["eval", "get_size=echo 4194304", &format!("pread={pread}")])
            .args(["pwrite=cat >/dev/null", "can_write=exit 0", "thread_model=echo parallel"])
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut disk = EioDisk { dir, nbdkit: Some(nbdkit), fuse: None };
        let t0 = Instant::now();
        while !sock.exists() {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("nbdkit did not start".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let file = disk.path();
        std::fs::write(&file, b"").map_err(|e| e.to_string())?;
        let fuse = Command::new("nbdfuse")
            .arg(&file)
            .arg("--unix")
            .arg(&sock)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        disk.fuse = Some(fuse);
        while std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) != 4 << 20 {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("nbdfuse did not mount".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(disk)
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("disk")
    }
}

impl Drop for EioDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.path()).status();
        for child in [self.fuse.take(), self.nbdkit.take()].into_iter().flatten() {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// fio's error options against planted EIO: what stops a job, what it goes on after, the
/// counts kept (failed I/Os count among `total_ios`, not in bytes or latencies), the JSON keys
/// and the exit status, for both tools on the same disk.
#[test]
fn error_options_on_planted_eio_match_fio() {
    let disk = match EioDisk::start() {
        Ok(d) => d,
        Err(why) => return println!("skipped: {why}"),
    };
    let path = disk.path();
    let cases: &[(&str, &[&str])] = &[
        ("stops at the first error", &["--ioengine=psync"]),
        ("continue_on_error=read", &["--ioengine=psync", "--continue_on_error=read"]),
        ("continue_on_error=write on reads", &["--ioengine=psync", "--continue_on_error=write"]),
        ("ignore_error alone", &["--ioengine=psync", "--ignore_error=EIO"]),
        ("ignore_error for writes only", &["--ioengine=psync", "--ignore_error=,EIO"]),
        ("libaio, continue_on_error=all", &["--ioengine=libaio", "--iodepth=4", "--continue_on_error=all"]),
        ("error_dump", &["--ioengine=psync", "--continue_on_error=1", "--error_dump=1"]),
    ];
    for (what, extra) in cases {
        let mut args: Vec<String> = ["--name=j", "--rw=read", "--bs=64k", "--size=4m", "--output-format=json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(format!("--filename={}", path.display()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let dir = crate::util::scratch();
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (f, x) = (crate::util::fio(dir.path(), &a), crate::util::fiox(dir.path(), &a));
        let doc = |o: &crate::util::Out| -> serde_json::Value {
            serde_json::from_str(&o.stdout[o.stdout.find('{').unwrap()..]).unwrap()
        };
        let (fj, xj) = (doc(&f), doc(&x));
        let pick = |d: &serde_json::Value| {
            let j = &d["jobs"][0];
            (
                j["error"].as_i64(),
                j.get("total_err").and_then(|v| v.as_u64()),
                j.get("first_error").and_then(|v| v.as_i64()),
                j["read"]["io_bytes"].as_u64(),
                j["read"]["clat_ns"]["N"].as_u64(),
            )
        };
        assert_eq!(pick(&xj), pick(&fj), "{what}: (error, total_err, first_error, bytes, clat N)");
        assert_eq!(x.code, f.code, "{what}: exit status; fiox stderr: {}", x.stderr);
        let errors = |s: &str| s.lines().filter(|l| l.contains("io_u error on file")).count();
        if what.starts_with("libaio") {
            assert_eq!(errors(&x.stderr), 0, "{what}: continued errors are silent");
        } else {
            assert_eq!(errors(&x.stderr), errors(&f.stderr), "{what}: io_u error lines\n{}", x.stderr);
            // psync issues nothing after the I/O that stopped the job, so issued counts agree.
            let ios = |d: &serde_json::Value| d["jobs"][0]["read"]["total_ios"].as_u64();
            assert_eq!(ios(&xj), ios(&fj), "{what}: total_ios counts the failed I/Os");
        }
        if let Some(line) = x.stderr.lines().find(|l| l.contains("io_u error")) {
            assert!(
                line.ends_with(&format!("Input/output error: read offset={}, buflen=65536", EioDisk::BAD.0)),
                "{line}"
            );
        }
    }
    // The normal output's errors line and terse's two extra fields, as fio prints them.
    let dir = crate::util::scratch();
    let file = format!("--filename={}", path.display());
    let base = ["--name=j", "--rw=read", "--bs=64k", "--size=4m", "--continue_on_error=all", &file];
    let normal = crate::util::fiox(dir.path(), &base);
    assert!(
        normal.stdout.contains("     errors    : total=4, first_error=5/<Input/output error>\n"),
        "{}",
        normal.stdout
    );
    let mut terse_args = base.to_vec();
    terse_args.push("--minimal");
    let (ft, xt) = (crate::util::fio(dir.path(), &terse_args), crate::util::fiox(dir.path(), &terse_args));
    let n = |s: &str| s.lines().next().unwrap_or("").split(';').count();
    assert_eq!(n(&xt.stdout), n(&ft.stdout), "terse fields with continue_on_error");
    assert!(xt.stdout.trim_end().ends_with(";4;5"), "{}", xt.stdout);
}

/// `exitall_on_error` stops the other running jobs when one fails (they report what they did,
/// error 0), and the exit status counts the jobs that failed, as fio's does.
#[test]
fn exitall_on_error_and_the_exit_status_count_failed_jobs() {
    let disk = match EioDisk::start() {
        Ok(d) => d,
        Err(why) => return println!("skipped: {why}"),
    };
    let dir = crate::util::scratch();
    let file = format!("--filename={}", disk.path().display());
    let job = ["--output-format=json", "--name=bad", "--rw=read", "--bs=64k", "--size=4m", &file];
    let other = ["--name=other", "--ioengine=null", "--size=1g", "--time_based", "--runtime=4", "--rate_iops=1000"];
    for stop in [false, true] {
        let mut args = if stop { vec!["--exitall_on_error"] } else { Vec::new() };
        args.extend(job);
        args.extend(other);
        let t0 = Instant::now();
        let out = crate::util::fiox(dir.path(), &args);
        let d: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let other_ms = d["jobs"][1]["job_runtime"].as_u64().unwrap();
        assert_eq!(out.code, 1, "one job failed");
        assert_eq!(d["jobs"][1]["error"].as_u64(), Some(0), "the stopped job has no error of its own");
        if stop {
            assert!(other_ms < 2000 && t0.elapsed() < Duration::from_secs(3), "exitall_on_error: {other_ms} ms");
        } else {
            assert!(other_ms >= 3900, "without exitall_on_error the other job runs its course: {other_ms} ms");
        }
    }
    let two =
        crate::util::fiox(dir.path(), &["--numjobs=2", "--name=bad", "--rw=read", "--bs=64k", "--size=4m", &file]);
    assert_eq!(two.code, 2, "two failed jobs: {}", two.stderr);
}

/// A file system that fills up mid-write: both tools stop with ENOSPC (28), keep the bytes
/// written before it and exit with status 1.
#[test]
fn a_full_file_system_stops_the_job_with_its_bytes_like_fio() {
    let dir = crate::util::scratch();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    if !Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success())
    {
        return println!("skipped: cannot mount a tmpfs");
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(&mnt);
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
