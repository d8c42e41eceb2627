//! Faults served for real by nbdkit and exposed as a file by nbdfuse (the kernel here loads no
//! modules, so no nbd, dm-error or dm-delay): planted and random EIO, a latency spike, and a
//! device slow enough that submitting blocks. Each test runs fio 3.33 and fiox on the same disk
//! and pins what must agree: the error, the counters kept, the exit status, and that no run goes
//! on past its bound.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::skip;
use crate::util::Out;

/// A disk served by nbdkit with the given filters and plugin, as a file of `size` bytes in a
/// scratch directory, and optionally as a loop device over that file. The loop device is
/// detached, nbdkit and nbdfuse are stopped, and the file unmounted, when it is dropped, also
/// when the test fails: by the device name and the child processes it recorded.
pub(crate) struct NbdDisk {
    dir: tempfile::TempDir,
    nbdkit: Option<Child>,
    fuse: Option<Child>,
    loop_dev: Option<PathBuf>,
}

/// The switchable fault server of the verification reference (section 5): an nbdkit sh plugin
/// over a backing file that, on `[FSTART, FEND)`, fails reads (`eio_read`) or writes
/// (`eio_write`), acknowledges writes it drops (`drop`), lands only their first half (`tear`)
/// or lands them `MDELTA` bytes away (`misdirect`), each while a file of that name exists in
/// `CTL`; `dead` drops every write. A switch takes effect on the next request.
const FAULT_SH: &str = r#"#!/bin/bash
inr() { [ "$2" -lt "$FEND" ] && [ $(($2+$1)) -gt "$FSTART" ]; }
case "$1" in
  get_size) stat -Lc %s "$IMG" ;;
  thread_model) echo parallel ;;
  can_write|can_flush) exit 0 ;;
  flush) sync "$IMG" ;;
  pread)
    if inr $3 $4 && [ -e $CTL/eio_read ]; then echo "EIO injected" >&2; exit 1; fi
    dd if="$IMG" skip=$4 count=$3 iflag=count_bytes,skip_bytes status=none ;;
  pwrite)
    if [ -e $CTL/dead ]; then cat >/dev/null; exit 0; fi
    if inr $3 $4; then
      if [ -e $CTL/eio_write ]; then cat >/dev/null; echo "EIO injected" >&2; exit 1; fi
      if [ -e $CTL/drop ]; then cat >/dev/null; exit 0; fi
      if [ -e $CTL/tear ]; then
        head -c $(($3/2)) | dd of="$IMG" seek=$4 conv=notrunc oflag=seek_bytes status=none
        cat >/dev/null; exit 0; fi
      if [ -e $CTL/misdirect ]; then
        dd of="$IMG" seek=$(($4+MDELTA)) conv=notrunc oflag=seek_bytes status=none; exit 0; fi
    fi
    dd of="$IMG" seek=$4 conv=notrunc oflag=seek_bytes status=none ;;
  *) exit 2 ;;
esac
"#;

impl NbdDisk {
    /// Where [`NbdDisk::eio`] fails reads: bytes 2 MiB to 2.25 MiB, four 64 KiB blocks.
    const BAD: (u64, u64) = (2 << 20, (2 << 20) + (256 << 10));

    /// `args` go to nbdkit after its socket: filters, the plugin and their parameters; `{dir}`
    /// in them stands for the scratch directory (for a control socket).
    pub(crate) fn start(args: &[&str], size: u64) -> Result<NbdDisk, String> {
        NbdDisk::serve(crate::util::scratch(), args, &[], size)
    }

    /// [`NbdDisk::start`] in a given scratch directory, with `env` (where `{dir}` stands for
    /// the directory too) in nbdkit's environment, which its sh plugin inherits.
    fn serve(dir: tempfile::TempDir, args: &[&str], env: &[(&str, String)], size: u64) -> Result<NbdDisk, String> {
        for tool in ["nbdkit", "nbdfuse"] {
            if Command::new(tool).arg("--version").output().is_err() {
                return Err(format!("{tool} is not installed"));
            }
        }
        let sock = dir.path().join("sock");
        let here = dir.path().display().to_string();
        let nbdkit = Command::new("nbdkit")
            .args(["--foreground", "-U"])
            .arg(&sock)
            .args(args.iter().map(|a| a.replace("{dir}", &here)))
            .envs(env.iter().map(|(k, v)| (k, v.replace("{dir}", &here))))
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut disk = NbdDisk { dir, nbdkit: Some(nbdkit), fuse: None, loop_dev: None };
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
        while std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) != size {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("nbdfuse did not mount".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(disk)
    }

    /// A 4 MiB disk of zeros whose reads of [`NbdDisk::BAD`] fail with EIO (nbdkit's eval
    /// plugin).
    fn eio() -> Result<NbdDisk, String> {
        let (lo, hi) = NbdDisk::BAD;
        let pread = format!(
            "pread=if [ $4 -lt {hi} ] && [ $(($4+$3)) -gt {lo} ]; then echo 'EIO planted' >&2; exit 1; fi; head -c $3 /dev/zero"
        );
        let args = ["eval", "get_size=echo 4194304", &pread, "pwrite=cat >/dev/null", "can_write=exit 0"];
        NbdDisk::start(&[&args[..], &["thread_model=echo parallel"]].concat(), 4 << 20)
    }

    /// A disk of `size` bytes of zeros served by [`FAULT_SH`], with faults on `range` when
    /// switched on ([`NbdDisk::switch`]); a misdirected write lands `misdirect` bytes away.
    pub(crate) fn faulty(size: u64, range: (u64, u64), misdirect: i64) -> Result<NbdDisk, String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::util::scratch();
        let script = dir.path().join("fault.sh");
        std::fs::write(&script, FAULT_SH).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
        std::fs::File::create(dir.path().join("img")).and_then(|f| f.set_len(size)).map_err(|e| e.to_string())?;
        std::fs::create_dir(dir.path().join("switches")).map_err(|e| e.to_string())?;
        let env = [
            ("IMG", "{dir}/img".to_string()),
            ("CTL", "{dir}/switches".to_string()),
            ("FSTART", range.0.to_string()),
            ("FEND", range.1.to_string()),
            ("MDELTA", misdirect.to_string()),
        ];
        NbdDisk::serve(dir, &["sh", "{dir}/fault.sh"], &env, size)
    }

    /// Turns a fault of [`FAULT_SH`] on or off.
    pub(crate) fn switch(&self, fault: &str, on: bool) {
        let file = self.dir.path().join("switches").join(fault);
        if on {
            std::fs::write(&file, b"").expect("a switch file");
        } else {
            let _ = std::fs::remove_file(&file);
        }
    }

    /// Puts a loop device with direct I/O over the disk's file (the kernel's block layer
    /// between the tools and the server, as on a real disk); it is detached first on drop.
    pub(crate) fn with_loop(mut self) -> Result<NbdDisk, String> {
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(self.path())
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!("losetup failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        self.loop_dev = Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
        Ok(self)
    }

    /// Where the tools do their I/O: the loop device if there is one, else the file.
    pub(crate) fn device(&self) -> PathBuf {
        self.loop_dev.clone().unwrap_or_else(|| self.path())
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("disk")
    }

    /// Where a filter's control socket (`{dir}/ctl`) is.
    fn control(&self) -> PathBuf {
        self.dir.path().join("ctl")
    }

    /// Pauses a disk served through the pause filter `after` from now for `hold`; the thread
    /// returns how long the device really stood still (from the filter's acknowledgement of
    /// the pause to that of the resume).
    pub(crate) fn stall(&self, after: Duration, hold: Duration) -> std::thread::JoinHandle<Duration> {
        let ctl = self.control();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            let mut s = UnixStream::connect(&ctl).expect("the pause filter's control socket");
            let mut b = [0u8; 1];
            s.write_all(b"p").and_then(|_| s.read_exact(&mut b)).expect("paused");
            let t0 = Instant::now();
            std::thread::sleep(hold);
            s.write_all(b"r").and_then(|_| s.read_exact(&mut b)).expect("resumed");
            t0.elapsed()
        })
    }
}

impl Drop for NbdDisk {
    fn drop(&mut self) {
        // The loop device holds the FUSE file open: it goes first.
        let had_loop = self.loop_dev.is_some();
        if let Some(dev) = self.loop_dev.take() {
            let _ = Command::new("losetup").arg("-d").arg(dev).status();
        }
        // The kernel lets go of a detached loop device's file a moment later; unmounting
        // before then fails with EBUSY, so that is retried for a while.
        for _ in 0..if had_loop { 100 } else { 1 } {
            // "target is busy" is expected while the kernel lets go, so the retries stay quiet.
            let quiet = if had_loop { std::process::Stdio::null() } else { std::process::Stdio::inherit() };
            if Command::new("umount").arg(self.path()).stderr(quiet).status().is_ok_and(|s| s.success()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for child in [self.fuse.take(), self.nbdkit.take()].into_iter().flatten() {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The JSON document in a run's standard output (fio may print notes before it).
pub(crate) fn doc(o: &Out) -> serde_json::Value {
    let at = o.stdout.find('{').unwrap_or_else(|| panic!("no JSON in: {}{}", o.stdout, o.stderr));
    serde_json::from_str(&o.stdout[at..]).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

/// Runs fio or fiox with `args` on the disk, in a scratch directory.
pub(crate) fn run_on(fiox: bool, disk: &NbdDisk, args: &[&str]) -> Out {
    let dir = crate::util::scratch();
    let file = format!("--filename={}", disk.path().display());
    let mut all = vec!["--name=j", "--output-format=json", file.as_str()];
    all.extend(args);
    if fiox {
        crate::util::fiox(dir.path(), &all)
    } else {
        crate::util::fio(dir.path(), &all)
    }
}

/// fio's error options against planted EIO: what stops a job, what it goes on after, the
/// counts kept (failed I/Os count among `total_ios`, not in bytes or latencies), the JSON keys
/// and the exit status, for both tools on the same disk.
#[test]
fn error_options_on_planted_eio_match_fio() {
    let disk = match NbdDisk::eio() {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
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
                line.ends_with(&format!("Input/output error: read offset={}, buflen=65536", NbdDisk::BAD.0)),
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
    let disk = match NbdDisk::eio() {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
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
    // exit_what=all: a later group never starts, and is listed with nothing done, as fio does.
    let later = ["--name=later", "--stonewall", "--ioengine=null", "--size=1g", "--time_based", "--runtime=2"];
    let args = [&["--exitall_on_error", "--exit_what=all"][..], &job[..], &other[..], &later[..]].concat();
    let out = crate::util::fiox(dir.path(), &args);
    let d: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let last = &d["jobs"][2];
    assert_eq!((last["jobname"].as_str(), last["job_runtime"].as_u64()), (Some("later"), Some(0)), "{d}");
    assert_eq!(out.code, 1);
    let two =
        crate::util::fiox(dir.path(), &["--numjobs=2", "--name=bad", "--rw=read", "--bs=64k", "--size=4m", &file]);
    assert_eq!(two.code, 2, "two failed jobs: {}", two.stderr);
}

/// Random EIO on 2% of reads (nbdkit's error filter): with `continue_on_error=all` both tools
/// run their course, report error 5 with the errors counted (`total_err` is exactly the I/Os
/// without a latency sample) and exit 0; without it both stop at the first error, name the file
/// and the offset, and exit 1.
#[test]
fn random_eio_is_counted_or_fatal_like_fio() {
    let disk = match NbdDisk::start(
        &["--filter=error", "memory", "64M", "error-pread=EIO", "error-pread-rate=2%"],
        64 << 20,
    ) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let base =
        ["--rw=randread", "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=8", "--time_based", "--runtime=2"];
    let mut share = Vec::new();
    for fiox in [false, true] {
        let mut args = base.to_vec();
        args.push("--continue_on_error=all");
        let out = run_on(fiox, &disk, &args);
        let d = doc(&out);
        let j = &d["jobs"][0];
        let who = if fiox { "fiox" } else { "fio" };
        assert_eq!((out.code, j["error"].as_u64()), (0, Some(5)), "{who}: {}", out.stderr);
        let (ios, samples) = (j["read"]["total_ios"].as_u64().unwrap(), j["read"]["clat_ns"]["N"].as_u64().unwrap());
        let errors = j["total_err"].as_u64().unwrap();
        assert_eq!(errors, ios - samples, "{who}: every failed I/O is counted, none has a latency");
        assert_eq!(j["first_error"].as_u64(), Some(5), "{who}");
        assert!(ios > 500, "{who}: {ios} I/Os");
        share.push(errors as f64 / ios as f64);
        if fiox {
            assert!(out.stderr.is_empty(), "continued errors are silent without error_dump: {}", out.stderr);
        }
    }
    for s in &share {
        assert!((0.01..0.035).contains(s), "about 2% of reads fail: {share:?}");
    }
    for fiox in [false, true] {
        let out = run_on(fiox, &disk, &base);
        let j = &doc(&out)["jobs"][0];
        assert_eq!((out.code, j["error"].as_u64()), (1, Some(5)), "{}", out.stderr);
        let line = out.stderr.lines().find(|l| l.contains("io_u error on file")).unwrap_or_default().to_string();
        // fio's line, after the tool's own name.
        let want = format!(": io_u error on file {}: Input/output error: read offset=", disk.path().display());
        let prefix = if fiox { "fiox" } else { "fio" };
        assert!(line.starts_with(&format!("{prefix}{want}")), "{}", out.stderr);
        assert!(line.ends_with(", buflen=4096"), "{line}");
        assert!(j["job_runtime"].as_u64().unwrap() < 1500, "the first error stops the job");
    }
}

/// Random write errors under verify (about 10% of writes fail with EIO): with
/// `continue_on_error=all` every failed write is counted and none is read back or reported as
/// a verify failure; every write that succeeded is read back and passes. Both tools.
#[test]
fn random_write_errors_under_verify_are_counted_and_never_verified() {
    let disk = match NbdDisk::start(
        &["--filter=error", "memory", "64M", "error-pwrite=EIO", "error-pwrite-rate=10%"],
        64 << 20,
    ) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    for fiox in [false, true] {
        for engine in ["--ioengine=libaio", "--ioengine=psync"] {
            let args = [
                "--rw=randwrite",
                "--bs=64k",
                "--size=8m",
                "--direct=1",
                engine,
                "--iodepth=8",
                "--verify=crc32c",
                "--continue_on_error=all",
                "--verify_state_save=0",
            ];
            let out = run_on(fiox, &disk, &args);
            let who = if fiox { "fiox" } else { "fio" };
            let j = &doc(&out)["jobs"][0];
            assert_eq!((out.code, j["error"].as_u64()), (0, Some(5)), "{who} {engine}: {}", out.stderr);
            let (ios, ok) = (j["write"]["total_ios"].as_u64().unwrap(), j["write"]["clat_ns"]["N"].as_u64().unwrap());
            let failed = j["total_err"].as_u64().unwrap();
            assert_eq!(failed, ios - ok, "{who} {engine}: every failed write is counted");
            assert!(failed > 0 && failed < ios / 3, "{who} {engine}: about 10% of {ios} writes fail: {failed}");
            assert!(!out.stderr.contains("verify"), "{who} {engine}: no failed write is verified: {}", out.stderr);
            if fiox || engine.ends_with("libaio") {
                // Every write that succeeded is read back (fio 3.33's synchronous read-back
                // stops at the first failed write: docs/fio-observed/verify-faults.md).
                assert_eq!(j["read"]["total_ios"].as_u64(), Some(ok), "{who} {engine}");
            }
        }
    }
}

/// A latency spike: the disk stops serving requests for 1.5 s mid-run (nbdkit's pause filter)
/// and then goes on. It is slow, not dead: both tools wait, report error 0 with nothing
/// dropped and the spike as their maximum latency, synchronous and asynchronous alike. A
/// `hang_timeout` shorter than the spike is the user's bound, and fiox holds to it.
#[test]
fn a_latency_spike_is_waited_for_and_the_hang_bound_holds() {
    let disk = match NbdDisk::start(&["--filter=pause", "memory", "64M", "pause-control={dir}/ctl"], 64 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    for engine in ["psync", "libaio"] {
        let eng = format!("--ioengine={engine}");
        let args = ["--rw=randread", "--bs=4k", "--direct=1", &eng, "--iodepth=8", "--time_based", "--runtime=3"];
        let mut counts = Vec::new();
        for fiox in [false, true] {
            let pause = disk.stall(Duration::from_millis(1000), Duration::from_millis(1500));
            let out = run_on(fiox, &disk, &args);
            pause.join().unwrap();
            let j = &doc(&out)["jobs"][0];
            let who = format!("{engine}, fiox {fiox}");
            assert_eq!((out.code, j["error"].as_u64()), (0, Some(0)), "{who}: {}", out.stderr);
            assert_eq!(j["read"]["drop_ios"].as_u64(), Some(0), "{who}");
            let max_ms = j["read"]["clat_ns"]["max"].as_u64().unwrap() / 1_000_000;
            assert!((1400..2500).contains(&max_ms), "{who}: the spike is the maximum latency: {max_ms} ms");
            counts.push(j["read"]["total_ios"].as_u64().unwrap() as f64);
        }
        let (f, x) = (counts[0], counts[1]);
        assert!(x > f / 3.0 && x < f * 3.0, "{engine}: fio {f} I/Os, fiox {x}");
    }
    let pause = disk.stall(Duration::from_millis(500), Duration::from_millis(4000));
    let t0 = Instant::now();
    let args = ["--rw=randread", "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=8", "--time_based"];
    let out = run_on(true, &disk, &[&args[..], &["--runtime=30", "--hang_timeout=1"]].concat());
    let reported = t0.elapsed();
    pause.join().unwrap();
    let j = &doc(&out)["jobs"][0];
    assert_eq!((out.code, j["error"].as_u64()), (1, Some(110)), "{}", out.stderr);
    assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "what completed before the spike is kept");
    assert!(j["read"]["drop_ios"].as_u64().unwrap() > 0, "the I/O in flight is dropped");
    // The report waits for the kernel to give back the abandoned I/O, which the pause holds
    // until it ends (4.5 s in).
    assert!(reported < Duration::from_secs(8), "reported after {reported:?}");
    assert!(out.stderr.contains("in flight"), "{}", out.stderr);
}

/// A device so slow that submitting blocks: FUSE lets 12 requests wait in the background and
/// blocks the next submission until one is done, and nbdkit's delay filter makes each take
/// 50 ms. A libaio job 512 deep spends all its runtime submitting. It must end on time, with
/// about fio's count: fiox used to fill its whole queue first (5 s for a 1 s job).
#[test]
fn blocked_submissions_end_at_the_runtime_like_fio() {
    let disk = match NbdDisk::start(&["--filter=delay", "memory", "64M", "rdelay=50ms"], 64 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let args = [
        "--rw=randread",
        "--bs=64k",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=512",
        "--time_based",
        "--runtime=1",
    ];
    let mut counts = Vec::new();
    for fiox in [false, true] {
        let t0 = Instant::now();
        let out = run_on(fiox, &disk, &args);
        let wall = t0.elapsed();
        let j = &doc(&out)["jobs"][0];
        assert_eq!((out.code, j["error"].as_u64()), (0, Some(0)), "fiox {fiox}: {}", out.stderr);
        if fiox {
            assert!(wall < Duration::from_millis(2500), "a 1 s job took {wall:?}");
            let runtime = j["job_runtime"].as_u64().unwrap();
            assert!(runtime < 1600, "job_runtime {runtime} ms");
        }
        counts.push(j["read"]["total_ios"].as_u64().unwrap() as f64);
    }
    let (f, x) = (counts[0], counts[1]);
    assert!(x > f / 2.0 && x < f * 2.0, "fio {f} I/Os, fiox {x}");
}
