//! Verification under real faults (acceptance items 10-15 of the verification reference):
//! EIO on writes and on reads, lost, torn and misdirected writes served live by nbdkit's sh
//! plugin (`nbd::FAULT_SH`) through nbdfuse and a loop device with direct I/O, a full
//! tmpfs, a slow device, random errors (nbdkit's error filter, counted against its log
//! filter) and a device that stops answering (its pause filter). Each test runs fio 3.33 and
//! fiox on the same job and pins what must agree; where fiox deliberately does better (a lost
//! write or the source of a misdirected one seen as stale, the written part of a `fill_device`
//! job verified, every block verified after a failed synchronous write, a hung device reported
//! at `hang_timeout`), it asserts fiox's result and that fio 3.33 misses it.
//! What fio did is written down in `docs/fio-observed/verify-faults.md`.
//!
//! Everything here needs root (loop devices, FUSE, mounts): without it, or without nbdkit,
//! nbdfuse or losetup, each test prints a "skipped" line. Every run is under `timeout -k`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::nbd::NbdDisk;
use crate::faults::local::SmallFs;
use crate::util::{fio_bin, fiox_bin, json, scratch, skip, Out};

/// The faulty range of the switchable disk: two 64 KiB blocks at 1 MiB.
const BAD: (u64, u64) = (1 << 20, (1 << 20) + (128 << 10));
/// The disk's size, which is also every job's size.
const SIZE: u64 = 4 << 20;

/// Why these tests cannot run here, if they cannot.
fn unable() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.ok().as_deref() != Some("0") {
        return Some("not root".into());
    }
    for dev in ["/dev/fuse", "/dev/loop-control"] {
        if !Path::new(dev).exists() {
            return Some(format!("no {dev}"));
        }
    }
    for tool in ["nbdkit", "nbdfuse", "losetup"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(format!("{tool} is not installed"));
        }
    }
    None
}

/// The switchable disk as a loop device, faults on `range`, misdirected writes `delta` bytes
/// away; `Err` says why the test is skipped.
fn disk(range: (u64, u64), delta: i64) -> Result<NbdDisk, String> {
    if let Some(why) = unable() {
        return Err(why);
    }
    NbdDisk::faulty(SIZE, range, delta)?.with_loop()
}

/// Runs fio or fiox with `args` in `dir`, killed if it runs past 60 s.
fn timed(fiox: bool, dir: &Path, args: &[&str]) -> Out {
    let bin = if fiox { fiox_bin() } else { fio_bin() };
    let o = Command::new("timeout")
        .args(["-k", "5", "60"])
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cannot start timeout");
    Out::from(o)
}

/// One run's outcome as the tests compare it.
#[derive(Debug, PartialEq)]
struct Res {
    code: i32,
    error: Option<i64>,
    total_err: Option<u64>,
    first_error: Option<i64>,
    written: u64,
    read: u64,
}

/// Runs a 4 MiB, 64 KiB-block crc32c verify job on `dev` with `extra` (later options win).
fn job(fiox: bool, dev: &Path, extra: &[&str]) -> (Res, Out) {
    let dir = scratch();
    let file = format!("--filename={}", dev.display());
    let mut args = vec!["--name=j", "--output-format=json", &file, "--direct=1", "--ioengine=psync"];
    args.extend(["--bs=64k", "--size=4m", "--verify=crc32c"]);
    args.extend(extra);
    let out = timed(fiox, dir.path(), &args);
    assert!(out.code != 124 && out.code != 137, "timed out: {args:?}");
    let d = json(&out);
    let j = &d["jobs"][0];
    let res = Res {
        code: out.code,
        error: j["error"].as_i64(),
        total_err: j.get("total_err").and_then(|v| v.as_u64()),
        first_error: j.get("first_error").and_then(|v| v.as_i64()),
        written: j["write"]["io_bytes"].as_u64().unwrap(),
        read: j["read"]["io_bytes"].as_u64().unwrap(),
    };
    (res, out)
}

/// Writes the whole disk once with fiox's verify blocks (no read-back), faults off; `extra`
/// picks the pattern (another `randseed` gives other contents).
fn prepare(disk: &NbdDisk, extra: &[&str]) {
    let mut args = vec!["--rw=write", "--do_verify=0"];
    args.extend(extra);
    let (res, out) = job(true, &disk.device(), &args);
    assert_eq!((res.code, res.written), (0, SIZE), "preparing the disk: {}", out.stderr);
}

/// The lines of a run's standard error with the tool's own name (`fio: `, `fiox: `) taken off.
/// (Without the `pid=N, err=...` line of the error that ended the job: fio prints it on
/// standard output, fiox on standard error; see [`pid_line`].)
fn lines(out: &Out) -> Vec<String> {
    out.stderr
        .lines()
        .map(|l| l.strip_prefix("fiox: ").or_else(|| l.strip_prefix("fio: ")).unwrap_or(l).to_string())
        .filter(|l| !l.starts_with("pid="))
        .collect()
}

/// The `pid=N, err=...` line of the error that ended the job, without the pid and fio's
/// source file and line.
fn pid_line(out: &Out) -> Option<String> {
    let l = out.stderr.lines().chain(out.stdout.lines()).find_map(|l| {
        l.strip_prefix("fiox: pid=").or_else(|| l.strip_prefix("fio: pid="))?.split_once(", ").map(|p| p.1)
    })?;
    let l = match (l.find("/file:"), l.find(", func=")) {
        (Some(a), Some(b)) => format!("{}{}", &l[..a], &l[b..]),
        _ => l.to_string(),
    };
    Some(l)
}

/// The verify failure lines (fio's and fiox's first line of each failed block).
fn failures(out: &Out) -> Vec<String> {
    lines(out).into_iter().filter(|l| l.starts_with("verify:") || l.contains(": verify failed at")).collect()
}

/// Item 10, writes: with `continue_on_error=write` (or `ignore_error` naming EIO for writes)
/// the failed writes are counted, the job goes on, and the failed blocks are not verified
/// later (no verify failure for them); without it, fio's message and status.
#[test]
fn eio_on_writes_is_counted_and_the_failed_blocks_are_not_verified() {
    let disk = match disk(BAD, 1 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    disk.switch("eio_write", true);
    let good = SIZE - (BAD.1 - BAD.0);
    let aio = ["--ioengine=libaio", "--iodepth=8"];
    let cases: &[(&str, &[&str])] = &[
        ("randwrite, continue_on_error=write", &["--rw=randwrite", "--continue_on_error=write"]),
        ("write, ignore_error=,EIO", &["--rw=write", "--ignore_error=,EIO"]),
        (
            "write, continue_on_error=write + ignore_error",
            &["--rw=write", "--continue_on_error=write", "--ignore_error=,EIO"],
        ),
    ];
    for (what, extra) in cases {
        let args = [&aio[..], extra].concat();
        let ((f, fo), (x, xo)) = (job(false, &dev, &args), job(true, &dev, &args));
        assert_eq!(x, f, "{what}: fio {}\nfiox {}", fo.stderr, xo.stderr);
        let want = Res { code: 0, error: Some(5), total_err: Some(2), first_error: Some(5), written: good, read: good };
        assert_eq!(x, want, "{what}: every written block is read back, the failed ones are not");
        assert!(failures(&fo).is_empty() && failures(&xo).is_empty(), "{what}: no verify failure");
        assert_eq!(xo.stderr, "", "{what}: continued errors are silent");
    }
    // psync: fio 3.33 keeps the failed write in its verify list, and its read-back ends there
    // (1 MiB read); fiox reads back every block that was written.
    let args = ["--rw=write", "--continue_on_error=write"];
    let ((f, _), (x, xo)) = (job(false, &dev, &args), job(true, &dev, &args));
    assert_eq!((x.code, x.error, x.total_err, x.written, x.read), (0, Some(5), Some(2), good, good), "{}", xo.stderr);
    assert_eq!((f.code, f.error, f.total_err, f.written, f.read), (0, Some(5), Some(2), good, BAD.0), "fio 3.33");
    // The first failed write ends the job, as fio: no read-back.
    let ((f, fo), (x, xo)) = (job(false, &dev, &["--rw=write"]), job(true, &dev, &["--rw=write"]));
    assert_eq!(x, f, "fio {}\nfiox {}", fo.stderr, xo.stderr);
    assert_eq!((x.code, x.error, x.written, x.read), (1, Some(5), BAD.0, 0));
    let want =
        format!("io_u error on file {}: Input/output error: write offset={}, buflen=65536", dev.display(), BAD.0);
    assert_eq!(lines(&xo), vec![want], "{}", xo.stderr);
    assert_eq!(lines(&xo), lines(&fo));
}

/// Item 10, reads: a read job with verify over blocks written earlier, EIO on a range: the
/// error line, counts and status are fio's; a failed read is never a verify failure.
#[test]
fn eio_on_reads_of_a_verify_job_matches_fio() {
    let disk = match disk(BAD, 1 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    prepare(&disk, &[]);
    disk.switch("eio_read", true);
    let ((f, fo), (x, xo)) = (job(false, &dev, &["--rw=read"]), job(true, &dev, &["--rw=read"]));
    assert_eq!(x, f, "fio {}\nfiox {}", fo.stderr, xo.stderr);
    assert_eq!((x.code, x.error, x.read), (1, Some(5), BAD.0));
    let want = format!("io_u error on file {}: Input/output error: read offset={}, buflen=65536", dev.display(), BAD.0);
    assert_eq!(lines(&xo), vec![want.clone()]);
    assert_eq!(lines(&fo), vec![want]);
    // The error that ended the job, once more with the job's pid.
    assert_eq!(pid_line(&xo).as_deref(), Some("err=5, func=io_u error, error=Input/output error"), "{}", xo.stderr);
    assert_eq!(pid_line(&xo), pid_line(&fo));
    for extra in [
        &["--rw=read", "--continue_on_error=read"][..],
        &["--rw=read", "--continue_on_error=all", "--ioengine=libaio", "--iodepth=8"],
    ] {
        let ((f, fo), (x, xo)) = (job(false, &dev, extra), job(true, &dev, extra));
        assert_eq!(x, f, "{extra:?}: fio {}\nfiox {}", fo.stderr, xo.stderr);
        let good = SIZE - (BAD.1 - BAD.0);
        assert_eq!(
            x,
            Res { code: 0, error: Some(5), total_err: Some(2), first_error: Some(5), written: 0, read: good }
        );
        assert_eq!(xo.stderr, "", "{extra:?}");
    }
    // Queued reads: which failed read ends the job first depends on completion order; both
    // tools stop with EIO and name a failed block's offset.
    let extra = ["--rw=randread", "--ioengine=libaio", "--iodepth=8"];
    for fiox in [false, true] {
        let (r, out) = job(fiox, &dev, &extra);
        assert_eq!((r.code, r.error), (1, Some(5)), "fiox {fiox}: {}", out.stderr);
        let errs = lines(&out);
        assert!(!errs.is_empty() && failures(&out).is_empty(), "fiox {fiox}: {}", out.stderr);
        for l in errs {
            let ok = [BAD.0, BAD.0 + (64 << 10)].iter().any(|o| {
                l == format!("io_u error on file {}: Input/output error: read offset={o}, buflen=65536", dev.display())
            });
            assert!(ok, "fiox {fiox}: {l}");
        }
    }
}

/// Item 15, lost writes: the device acknowledges and drops the writes to a range that holds
/// an older generation of valid blocks. fiox's map finds them stale; fio 3.33 passes (its
/// numberio matches, since the older pass wrote the same sequence).
#[test]
fn a_lost_write_is_stale_to_fiox_and_invisible_to_fio() {
    let disk = match disk(BAD, 1 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    let stale = |o: u64| {
        format!(" at file {} offset {o}, length 65536 (requested block: offset={o}, length=65536)", dev.display())
    };
    let run = |fiox: bool, extra: &[&str]| {
        disk.switch("drop", false);
        prepare(&disk, &[]);
        disk.switch("drop", true);
        job(fiox, &dev, extra)
    };
    for extra in [&["--rw=write"][..], &["--rw=write", "--continue_on_error=verify"]] {
        let (f, fo) = run(false, extra);
        assert_eq!((f.code, f.error, f.read), (0, Some(0), SIZE), "fio 3.33 misses it: {}", fo.stderr);
        assert!(fo.stderr.is_empty(), "{}", fo.stderr);
        let (x, xo) = run(true, extra);
        let found = failures(&xo);
        assert!(found.iter().all(|l| l.starts_with("verify: stale block (lost write?): ")), "{}", xo.stderr);
        if extra.len() == 1 {
            assert_eq!((x.code, x.error, x.read), (1, Some(84), BAD.0 + (64 << 10)), "{}", xo.stderr);
            assert_eq!(found.len(), 1);
            assert!(found[0].ends_with(&stale(BAD.0)), "{}", found[0]);
        } else {
            assert_eq!((x.code, x.error, x.total_err, x.first_error, x.read), (0, Some(84), Some(2), Some(84), SIZE));
            assert_eq!(found.len(), 2, "{}", xo.stderr);
            assert!(found[0].ends_with(&stale(BAD.0)) && found[1].ends_with(&stale(BAD.0 + (64 << 10))));
        }
    }
    // Random order, each tool over its own earlier pass of the same job: fio 3.33 repeats its
    // sequence (randrepeat=1), so numberio matches and it passes; fiox's map still sees it.
    // With randrepeat=0, fiox finds it too (fio only when its order happens to change numberio).
    for extra in [&["--rw=randwrite"][..], &["--rw=randwrite", "--randrepeat=0"]] {
        for fiox in [false, true] {
            disk.switch("drop", false);
            let mut prep = extra.to_vec();
            prep.push("--do_verify=0");
            let (p, po) = job(fiox, &dev, &prep);
            assert_eq!(p.code, 0, "{}", po.stderr);
            disk.switch("drop", true);
            let (r, out) = job(fiox, &dev, extra);
            if fiox {
                assert_eq!((r.code, r.error), (1, Some(84)), "{extra:?}: {}", out.stderr);
                assert!(failures(&out)[0].starts_with("verify: stale block (lost write?): "), "{}", out.stderr);
            } else if extra.len() == 1 {
                assert_eq!((r.code, r.error, r.read), (0, Some(0), SIZE), "fio 3.33 misses it: {}", out.stderr);
            }
        }
    }
}

/// Item 15, torn writes: only the first half of each write to the range lands over blocks of
/// other contents (a pass with another seed). Both tools report a checksum failure at the
/// block's offset, with the same counts.
#[test]
fn a_torn_write_fails_the_checksum_in_both() {
    let disk = match disk(BAD, 1 << 20) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    let line = |o: u64| {
        format!(
            "crc32c: verify failed at file {} offset {o}, length 65536 (requested block: offset={o}, length=65536, flags=88)",
            dev.display()
        )
    };
    for extra in [
        &["--rw=write"][..],
        &["--rw=write", "--continue_on_error=verify"],
        &["--rw=randwrite", "--ioengine=libaio", "--iodepth=8", "--continue_on_error=verify"],
    ] {
        let mut got = Vec::new();
        for fiox in [false, true] {
            disk.switch("tear", false);
            prepare(&disk, &["--randseed=77"]);
            disk.switch("tear", true);
            let (r, out) = job(fiox, &dev, extra);
            let want: Vec<String> =
                if extra.len() == 1 { vec![line(BAD.0)] } else { vec![line(BAD.0), line(BAD.0 + (64 << 10))] };
            let mut found = failures(&out);
            found.sort();
            assert_eq!(found, want, "{extra:?}, fiox {fiox}: {}", out.stderr);
            got.push(r);
        }
        assert_eq!(got[1], got[0], "{extra:?}");
        let r = &got[1];
        if extra.len() == 1 {
            assert_eq!((r.code, r.error, r.read), (1, Some(84), BAD.0 + (64 << 10)));
        } else {
            assert_eq!((r.code, r.error, r.total_err, r.read), (0, Some(84), Some(2), SIZE));
        }
    }
    // A header every 4 KiB: the first interval past the torn half holds the older pass's data
    // (no header there), and both tools name that interval's offset in the same line.
    let mut outs = Vec::new();
    for fiox in [false, true] {
        disk.switch("tear", false);
        prepare(&disk, &["--randseed=77"]);
        disk.switch("tear", true);
        let (r, out) = job(fiox, &dev, &["--rw=write", "--verify_interval=4k"]);
        assert_eq!((r.code, r.error), (1, Some(84)), "fiox {fiox}: {}", out.stderr);
        let line = failures(&out).first().cloned().unwrap_or_default();
        let at = format!(
            " at file {} offset {}, length 4096 (requested block: offset={}, length=65536)",
            dev.display(),
            BAD.0 + (32 << 10),
            BAD.0
        );
        assert!(line.starts_with("verify: bad magic header ") && line.ends_with(&at), "fiox {fiox}: {line}");
        outs.push(out.stderr);
    }
    assert_eq!(outs[1], outs[0]);
}

/// Item 15, misdirected writes: writes to [2 MiB, 2.125 MiB) land 1 MiB lower, over blocks the
/// job wrote earlier. The victim holds a foreign header: "bad header offset" in both tools,
/// the same line. The source keeps an older generation: stale to fiox only.
#[test]
fn a_misdirected_write_is_a_bad_offset_for_both_and_stale_for_fiox() {
    let src = (2 << 20, (2 << 20) + (128 << 10));
    let disk = match disk(src, -(1 << 20)) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    let at = |o: u64| {
        format!(" at file {} offset {o}, length 65536 (requested block: offset={o}, length=65536)", dev.display())
    };
    let victim = |o: u64| format!("verify: bad header offset {}, wanted {o}{}", o + (1 << 20), at(o));
    let run = |fiox: bool, extra: &[&str]| {
        disk.switch("misdirect", false);
        prepare(&disk, &[]);
        disk.switch("misdirect", true);
        job(fiox, &dev, extra)
    };
    let ((f, fo), (x, xo)) = (run(false, &["--rw=write"]), run(true, &["--rw=write"]));
    assert_eq!(x, f);
    assert_eq!((x.code, x.error, x.read), (1, Some(84), (1 << 20) + (64 << 10)));
    assert_eq!(xo.stderr, fo.stderr, "the victim's line is fio's");
    assert_eq!(failures(&xo), vec![victim(1 << 20)]);
    let extra = ["--rw=write", "--continue_on_error=verify"];
    let ((f, fo), (x, xo)) = (run(false, &extra), run(true, &extra));
    let victims = vec![victim(1 << 20), victim((1 << 20) + (64 << 10))];
    assert_eq!(failures(&fo), victims, "fio 3.33 sees the victims only");
    assert_eq!((f.code, f.error, f.total_err, f.read), (0, Some(84), Some(2), SIZE));
    let found = failures(&xo);
    assert_eq!(found.len(), 4, "{}", xo.stderr);
    assert_eq!(found[..2], victims[..]);
    for (l, o) in found[2..].iter().zip([src.0, src.0 + (64 << 10)]) {
        assert!(l.starts_with("verify: stale block (lost write?): ") && l.ends_with(&at(o)), "{l}");
    }
    assert_eq!((x.code, x.error, x.total_err, x.first_error, x.read), (0, Some(84), Some(4), Some(84), SIZE));
}

/// Item 14, ENOSPC: a 16 MiB verify job into a file on an 8 MiB tmpfs. By default both stop
/// with fio's message and status and verify nothing; with `ignore_error=,ENOSPC` +
/// `continue_on_error=write` both count the failures and verify what was written; with
/// `fill_device=1` fiox verifies the written part while fio 3.33 skips its read-back.
#[test]
fn enospc_and_fill_device_verify_the_written_part() {
    if let Some(why) = unable() {
        skip!("{why}");
    }
    let dir = scratch();
    let Some(fs) = SmallFs::mount(dir.path(), "8M") else { skip!("cannot mount a tmpfs") };
    let file = fs.0.join("f");
    let run = |fiox: bool, extra: &[&str]| {
        let _ = std::fs::remove_file(&file);
        let mut args = vec!["--rw=write", "--size=16m", "--direct=0"];
        args.extend(extra);
        job(fiox, &file, &args)
    };
    let full = 8 << 20;
    let ((f, fo), (x, xo)) = (run(false, &[]), run(true, &[]));
    assert_eq!(x, f, "fio {}\nfiox {}", fo.stderr, xo.stderr);
    assert_eq!((x.code, x.error, x.written, x.read), (1, Some(28), full, 0));
    let want =
        format!("io_u error on file {}: No space left on device: write offset={full}, buflen=65536", file.display());
    assert_eq!(lines(&xo), vec![want.clone()]);
    assert_eq!(lines(&fo), vec![want.clone()]);
    let extra = ["--continue_on_error=write", "--ignore_error=,ENOSPC"];
    let ((f, fo), (x, xo)) = (run(false, &extra), run(true, &extra));
    assert_eq!(x, f, "fio {}\nfiox {}", fo.stderr, xo.stderr);
    assert_eq!(
        x,
        Res { code: 0, error: Some(28), total_err: Some(128), first_error: Some(28), written: full, read: full }
    );
    let ((f, fo), (x, xo)) = (run(false, &["--fill_device=1"]), run(true, &["--fill_device=1"]));
    assert_eq!(
        (x.code, x.error, x.written, x.read),
        (0, Some(0), full, full),
        "fiox verifies what it wrote: {}",
        xo.stderr
    );
    assert_eq!((f.code, f.error, f.written, f.read), (0, Some(0), full, 0), "fio 3.33 skips the read-back");
    // fio prints the ENOSPC that ended the job even so; fiox keeps a successful run's stderr empty.
    assert_eq!(lines(&fo), vec![want]);
    assert_eq!(xo.stderr, "");
    drop(fs);
}

/// Item 12, latency: every write takes at least 5 ms (nbdkit's delay filter), 8 in flight
/// with libaio, read back at the end or by `verify_backlog` while writing: no false failure,
/// every block read back, in both tools.
#[test]
fn verify_under_latency_has_no_false_failures() {
    if let Some(why) = unable() {
        skip!("{why}");
    }
    let disk = match NbdDisk::start(&["--filter=delay", "memory", "64M", "wdelay=5ms"], 64 << 20)
        .and_then(|d| d.with_loop())
    {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    let base = ["--rw=randwrite", "--bs=4k", "--ioengine=libaio", "--iodepth=8"];
    for extra in [&[][..], &["--verify_backlog=64"]] {
        for fiox in [false, true] {
            let args = [&base[..], extra].concat();
            let (r, out) = job(fiox, &dev, &args);
            assert_eq!((r.code, r.error, r.written), (0, Some(0), SIZE), "{extra:?}, fiox {fiox}: {}", out.stderr);
            assert_eq!(r.read, SIZE, "{extra:?}, fiox {fiox}: every block is read back once");
            assert!(out.stderr.is_empty(), "{extra:?}, fiox {fiox}: {}", out.stderr);
            let clat = json(&out)["jobs"][0]["write"]["clat_ns"]["mean"].as_f64().unwrap();
            assert!(clat >= 5e6, "{extra:?}, fiox {fiox}: the delay is seen: {clat} ns");
        }
    }
}

/// What nbdkit's log filter saw the tool do in one run: each request's offset and length, and
/// which failed.
#[derive(Debug, Default)]
struct Served {
    writes: Vec<(u64, u64)>,
    reads: Vec<(u64, u64)>,
    failed_writes: Vec<(u64, u64)>,
    failed_reads: Vec<(u64, u64)>,
}

/// Parses nbdkit's log filter lines from byte `from` of `log`, once every request there has
/// its result line (the filter writes it before the reply, but the file may lag a little).
/// A request line is `connection=C Write id=N offset=0x.. count=0x.. ...`, its result
/// `connection=C ...Write id=N return=-1 error=EIO` (ids count per connection).
fn served(log: &Path, from: u64) -> Served {
    let hex = |l: &str, key: &str| {
        let v = l.split(' ').find_map(|w| w.strip_prefix(key)).expect("a logged field");
        u64::from_str_radix(v.trim_start_matches("0x"), 16).expect("a hexadecimal field")
    };
    let key = |l: &str, op: &str, at: usize| {
        let conn = l.split(' ').find(|w| w.starts_with("connection=")).unwrap_or("").to_string();
        let id = l[at..].split(' ').find(|w| w.starts_with("id=")).unwrap_or("").to_string();
        (conn, op.to_string(), id)
    };
    let t0 = std::time::Instant::now();
    loop {
        let text = std::fs::read(log).expect("nbdkit's log");
        let text = String::from_utf8_lossy(&text[from as usize..]).into_owned();
        let mut asked = std::collections::HashMap::new();
        let mut done = Vec::new();
        for l in text.lines() {
            for op in ["Read", "Write"] {
                if let Some(at) = l.find(&format!(" {op} id=")) {
                    asked.insert(key(l, op, at), (hex(l, "offset="), hex(l, "count=")));
                } else if let Some(at) = l.find(&format!(" ...{op} id=")) {
                    done.push((key(l, op, at), l.contains(" return=-1")));
                }
            }
        }
        if done.len() < asked.len() && t0.elapsed() < std::time::Duration::from_secs(3) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        assert_eq!(done.len(), asked.len(), "every logged request has its result");
        let mut s = Served::default();
        for (k, failed) in done {
            let req = asked[&k];
            let write = k.1 == "Write";
            match (write, failed) {
                (true, false) => s.writes.push(req),
                (true, true) => s.failed_writes.push(req),
                (false, false) => s.reads.push(req),
                (false, true) => s.failed_reads.push(req),
            }
        }
        return s;
    }
}

/// Item 11, random errors: nbdkit's error filter fails 10 % of the writes (and, in a second
/// case, 10 % of the reads too) of a 64-block random write+verify job with
/// `continue_on_error=all`, psync and libaio at depth 8. Every block is written once, 64 KiB
/// per request (the loop device neither merges nor splits them here, which the test checks):
/// so fiox's `total_err` is exactly the server's count of failed requests; fiox never reads
/// back a block whose write failed (it holds an older run's block: reading it would be a false
/// stale or checksum failure), reads every other block once, and finds them all good. fio 3.33
/// reports no verify failure either; with psync its read-back ends at the first failed block
/// and a failed read ends the job, uncounted (rc 1).
#[test]
fn random_errors_are_each_counted_and_failed_blocks_never_verified() {
    if let Some(why) = unable() {
        skip!("{why}");
    }
    let ctl = scratch();
    let c = ctl.path().display();
    let (log, wfile, rfile) = (ctl.path().join("log"), ctl.path().join("w"), ctl.path().join("r"));
    let args = [
        "--filter=log".to_string(),
        "--filter=error".into(),
        "memory".into(),
        "64M".into(),
        format!("logfile={c}/log"),
        "error=EIO".into(),
        "error-pwrite-rate=10%".into(),
        format!("error-pwrite-file={c}/w"),
        "error-pread-rate=10%".into(),
        format!("error-pread-file={c}/r"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let disk = match NbdDisk::start(&args, 64 << 20).and_then(|d| d.with_loop()) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    std::fs::write(&wfile, b"").unwrap();
    let blk = 64 << 10;
    for reads_fail in [false, true] {
        if reads_fail {
            std::fs::write(&rfile, b"").unwrap();
        }
        for engine in [&["--ioengine=psync"][..], &["--ioengine=libaio", "--iodepth=8"]] {
            for fiox in [false, true, true, true] {
                let from = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
                let args = [&["--rw=randwrite", "--continue_on_error=all"][..], engine].concat();
                let (r, out) = job(fiox, &dev, &args);
                let s = served(&log, from);
                let who = format!("{engine:?}, reads fail {reads_fail}, fiox {fiox}: {}", out.stderr);
                // The tool's own requests are its direct 64 KiB I/Os; a buffered 256 KiB read
                // of offset 0 when fiox opens the device (the kernel's, not fiox's) is not.
                let mine = |v: &[(u64, u64)]| v.iter().filter(|q| q.1 == blk).map(|q| q.0).collect::<Vec<_>>();
                let (good_w, bad_w, good_r, bad_r) =
                    (mine(&s.writes), mine(&s.failed_writes), mine(&s.reads), mine(&s.failed_reads));
                let mut all: Vec<u64> = good_w.iter().chain(&bad_w).copied().collect();
                all.sort();
                let blocks: Vec<u64> = (0..SIZE / blk).map(|b| b * blk).collect();
                assert_eq!(all, blocks, "{who}: each block written once, 64 KiB a request (no merge, no split)");
                assert!(reads_fail || bad_r.is_empty());
                let failed = (bad_w.len() + bad_r.len()) as u64;
                assert!(failures(&out).is_empty(), "{who}: no verify failure");
                let read: Vec<&u64> = good_r.iter().chain(&bad_r).collect();
                assert!(read.iter().all(|o| !bad_w.contains(o)), "{who}: a block whose write failed is read back");
                assert_eq!(r.written, good_w.len() as u64 * blk, "{who}");
                if fiox {
                    let want_err = if failed > 0 { Some(5) } else { Some(0) };
                    assert_eq!((r.code, r.error, r.total_err.unwrap_or(0)), (0, want_err, failed), "{who}");
                    let mut read: Vec<u64> = read.into_iter().copied().collect();
                    read.sort();
                    let mut want = good_w.clone();
                    want.sort();
                    assert_eq!(read, want, "{who}: every block written fine is read back once");
                    assert_eq!(r.read, good_r.len() as u64 * blk, "{who}: and found good");
                    assert_eq!(out.stderr, "", "{who}");
                } else {
                    // fio 3.33: a failed read of the read-back ends a psync job (rc 1) and is not
                    // counted; every other failed request is.
                    let stopped = u64::from(r.code == 1);
                    assert!(r.code == 0 || !bad_r.is_empty(), "{who}");
                    assert_eq!(r.total_err.unwrap_or(0) + stopped, failed, "fio 3.33: {who}");
                }
            }
        }
    }
    drop(disk);
    drop(ctl);
}

/// A run in its own process group (`timeout -k` and the tool under it), its output collected
/// as it comes, with the time of the last bytes written to standard output.
struct Live {
    child: std::process::Child,
    stdout: std::sync::Arc<std::sync::Mutex<(Vec<u8>, Option<std::time::Instant>)>>,
    stderr: std::sync::Arc<std::sync::Mutex<(Vec<u8>, Option<std::time::Instant>)>>,
}

impl Live {
    /// Starts the tool in `dir` (where fio and fiox save their verify state).
    fn start(fiox: bool, dir: &Path, args: &[&str]) -> Live {
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;
        let bin = if fiox { fiox_bin() } else { fio_bin() };
        let mut child = Command::new("timeout")
            .args(["-k", "5", "60"])
            .arg(bin)
            .args(args)
            .current_dir(dir)
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start timeout");
        let drain = |mut r: Box<dyn std::io::Read + Send>| {
            let buf = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), None)));
            let b = buf.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = r.read(&mut chunk) {
                    let mut b = b.lock().unwrap();
                    b.0.extend_from_slice(&chunk[..n]);
                    b.1 = Some(std::time::Instant::now());
                }
            });
            buf
        };
        let stdout = drain(Box::new(child.stdout.take().unwrap()));
        let stderr = drain(Box::new(child.stderr.take().unwrap()));
        Live { child, stdout, stderr }
    }

    /// The JSON report and when its last bytes came, once it is complete.
    fn report(&self) -> Option<(serde_json::Value, std::time::Instant)> {
        let b = self.stdout.lock().unwrap();
        let text = String::from_utf8_lossy(&b.0);
        let at = text.find('{')?;
        let doc = serde_json::Deserializer::from_str(&text[at..]).into_iter().next()?.ok()?;
        Some((doc, b.1?))
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap().0).into_owned()
    }

    /// SIGKILL to the whole group; the processes go once the kernel lets go of their I/O.
    fn kill(&self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    }

    /// Waits for the run to end (at most `timeout`'s limit): its exit status.
    fn wait(&mut self) -> i32 {
        self.child.wait().map(|s| s.code().unwrap_or(-1)).unwrap_or(-1)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

/// nbdkit's pause filter, paused for as long as this lives: it is resumed on drop, before the
/// runs and the disk go, also when the test fails.
struct Paused(std::os::unix::net::UnixStream);

impl Paused {
    fn new(ctl: &Path) -> Paused {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(ctl).expect("the pause filter's control socket");
        let mut b = [0u8; 1];
        s.write_all(b"p").and_then(|_| s.read_exact(&mut b)).expect("paused");
        assert_eq!(&b, b"P");
        Paused(s)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        use std::io::{Read, Write};
        let mut b = [0u8; 1];
        let _ = self.0.write_all(b"r").and_then(|_| self.0.read_exact(&mut b));
    }
}

/// Item 13, a hung device: the server stops answering (nbdkit's pause filter) 1 s into a
/// rate-limited 64 MiB write+verify job with `hang_timeout=3s`. fiox reports within 3 s plus
/// its 2 s grace for a worker stuck in a system call (plus slack for a busy machine): error
/// ETIMEDOUT, the write figures so far, and a line naming the device, how many I/Os are in
/// flight and how long nothing completed; it exits non-zero once the device is resumed (the
/// kernel holds the process until its I/O returns). fio 3.33 just waits, its runtime (2 s)
/// ignored: seen still running 4 s into the pause, then killed.
#[test]
fn a_hung_device_ends_a_verify_job_at_its_hang_timeout() {
    if let Some(why) = unable() {
        skip!("{why}");
    }
    let ctl = scratch();
    let sock = ctl.path().join("pctl");
    let pctl = format!("pause-control={}", sock.display());
    let disk = match NbdDisk::start(&["--filter=pause", "memory", "64M", &pctl], 64 << 20).and_then(|d| d.with_loop()) {
        Ok(d) => d,
        Err(why) => skip!("{why}"),
    };
    let dev = disk.device();
    let file = format!("--filename={}", dev.display());
    let base = [
        "--name=j",
        "--output-format=json",
        &file,
        "--direct=1",
        "--rw=randwrite",
        "--bs=64k",
        "--size=64m",
        "--verify=crc32c",
        "--rate=8m",
    ];
    let second = Duration::from_secs(1);
    for engine in [&["--ioengine=libaio", "--iodepth=8"][..], &["--ioengine=psync"]] {
        let mut run = Live::start(true, ctl.path(), &[&base[..], engine, &["--hang_timeout=3s"]].concat());
        std::thread::sleep(second);
        let pause = Paused::new(&sock);
        let paused = std::time::Instant::now();
        while run.report().is_none() && paused.elapsed() < 15 * second {
            std::thread::sleep(Duration::from_millis(50));
        }
        let (doc, at) = run.report().unwrap_or_else(|| panic!("{engine:?}: no report: {}", run.stderr()));
        let took = at.duration_since(paused);
        drop(pause);
        let code = run.wait();
        let (err, who) = (run.stderr(), format!("{engine:?}"));
        assert!(took > 2 * second && took < 7 * second, "{who}: reported {took:?} into the pause: {err}");
        assert_eq!(code, 1, "{who}: {err}");
        let j = &doc["jobs"][0];
        assert_eq!(j["error"].as_i64(), Some(110), "{who}: ETIMEDOUT");
        let written = j["write"]["io_bytes"].as_u64().unwrap();
        assert!(written > 0 && written < 64 << 20, "{who}: the writes so far: {written}");
        assert_eq!(j["read"]["io_bytes"].as_u64(), Some(0), "{who}: the verify phase never came");
        let secs = |s: &str| s.split(' ').next().and_then(|v| v.parse::<f64>().ok());
        if engine.len() == 2 {
            let head = format!(" I/Os in flight on {}, the oldest issued ", dev.display());
            let at = err.find(&head).unwrap_or_else(|| panic!("{who}: {err}"));
            let n: u64 = err[..at].rsplit('(').next().and_then(|v| v.parse().ok()).expect("how many in flight");
            let age = secs(&err[at + head.len()..]).expect("the oldest's age");
            assert!((1..=8).contains(&n) && age >= 2.9, "{who}: {err}");
            assert_eq!(j["write"]["drop_ios"].as_u64(), Some(n), "{who}: the I/O in flight is dropped");
        } else {
            // The psync worker cannot be woken from its write: reported from its last snapshot.
            let head = format!("job 'j' is stuck in a system call on {}: no I/O completed for ", dev.display());
            let at = err.find(&head).unwrap_or_else(|| panic!("{who}: {err}"));
            let quiet = secs(&err[at + head.len()..]).expect("for how long");
            assert!(quiet >= 3.0 && err.contains(" s (1 in flight)"), "{who}: {err}");
        }
    }
    // fio 3.33 with its runtime at 2 s: still waiting 5 s after its start, nothing printed.
    let mut run =
        Live::start(false, ctl.path(), &[&base[..], &["--ioengine=libaio", "--iodepth=8", "--runtime=2"]].concat());
    std::thread::sleep(second);
    let pause = Paused::new(&sock);
    std::thread::sleep(4 * second);
    let running = run.child.try_wait().ok().flatten().is_none();
    let printed = run.report().is_some();
    run.kill();
    drop(pause);
    run.wait();
    assert!(running && !printed, "fio 3.33 waits for the device: {}", run.stderr());
    drop(run);
    drop(disk);
    drop(ctl);
}
