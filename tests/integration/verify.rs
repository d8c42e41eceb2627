//! Verification: fio 3.33's blocks written and checked by fiox, fio's blocks checked by fiox
//! and fiox's by fio, and planted corruption reported as fio reports it.

use std::path::Path;

use crate::util::{fio, fiox, json, scratch, tool, Out};

const KINDS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "null",
];

fn run(fiox_run: bool, dir: &Path, args: &[&str]) -> Out {
    let mut a = vec!["--name=v", "--output-format=json"];
    a.extend_from_slice(args);
    tool(fiox_run, dir, &a)
}

fn dir_bytes(out: &Out, dir: &str) -> u64 {
    json(out)["jobs"][0][dir]["io_bytes"].as_u64().unwrap()
}

#[test]
fn every_kind_writes_and_reads_back() {
    let d = scratch();
    for kind in KINDS.iter().chain(&["pattern", "pattern_hdr"]) {
        let file = format!("--filename={kind}.dat");
        let verify = format!("--verify={kind}");
        let out =
            run(true, d.path(), &[&file, "--size=1m", "--bs=4k", "--rw=randwrite", &verify, "--verify_pattern=0x5aa5"]);
        assert_eq!(out.code, 0, "verify={kind}: {}", out.stderr);
        assert_eq!(out.stderr, "", "verify={kind}: a clean run prints nothing on stderr");
        assert_eq!(dir_bytes(&out, "write"), 1 << 20, "verify={kind}");
        assert_eq!(dir_bytes(&out, "read"), 1 << 20, "verify={kind}: every block is read back");
    }
}

/// The writer's and the reader's options for one cross-check.
struct Case {
    kind: &'static str,
    write: Vec<String>,
    read: Vec<String>,
    /// fio 3.33 writes blocks it cannot verify itself: a pattern behind a header (meta, type
    /// 17) with verify_offset gets stale header bytes in its data after a buffer's first write.
    fio_fails_itself: bool,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let shapes: &[(&[&str], &[&str])] = &[
        (&["--bs=4k"], &["--bs=4k"]),
        (&["--bs=512"], &["--bs=512"]),
        (&["--bs=64k"], &["--bs=64k"]),
        (&["--bs=64k", "--verify_interval=512"], &["--bs=64k", "--verify_interval=512"]),
        // Variable blocks with a header every 4 KiB: the reader's 4 KiB blocks are intervals.
        (&["--bsrange=4k-64k", "--verify_interval=4k"], &["--bs=4k"]),
    ];
    for kind in KINDS.iter().chain(&["pattern", "pattern_hdr"]) {
        for (w, r) in shapes {
            // The moved header must not overlap itself: 64 bytes hold the smaller ones.
            let big = ["sha256", "sha512"].contains(kind) || kind.starts_with("sha3");
            for vo in ["", if big { "--verify_offset=256" } else { "--verify_offset=64" }] {
                if !vo.is_empty() && (*kind == "pattern" || *kind == "null") {
                    continue;
                }
                // The pattern starts again at each write, with %o the write's offset: read in
                // other block sizes, only a pattern that divides them and holds no %o checks.
                let patterns: &[&str] = match *kind {
                    "pattern" | "pattern_hdr" | "meta" | "md5" if w[0].starts_with("--bsrange") => &["0xdeadbeef"],
                    "pattern" | "pattern_hdr" | "meta" | "md5" => &["0xdeadbeef", "%o", "\"abcd\"-120xdeadface"],
                    _ => &[""],
                };
                for p in patterns {
                    // fio 3.33 has no word for type 17: a pattern without verify= is it.
                    let mut common = if *kind == "pattern_hdr" { vec![] } else { vec![format!("--verify={kind}")] };
                    if !vo.is_empty() {
                        common.push(vo.to_string());
                    }
                    if !p.is_empty() {
                        common.push(format!("--verify_pattern={p}"));
                    }
                    let mut write: Vec<String> = w.iter().map(|s| s.to_string()).collect();
                    write.extend(common.clone());
                    let mut read: Vec<String> = r.iter().map(|s| s.to_string()).collect();
                    read.extend(common);
                    let fio_fails_itself = ["meta", "pattern_hdr"].contains(kind) && !vo.is_empty() && !p.is_empty();
                    v.push(Case { kind, write, read, fio_fails_itself });
                }
            }
        }
    }
    v
}

fn cross(writer_fiox: bool) {
    let d = scratch();
    let mut failed = Vec::new();
    for (n, c) in cases().iter().enumerate().filter(|(_, c)| writer_fiox || !c.fio_fails_itself) {
        let file = format!("--filename=c{n}.dat");
        let mut w = vec![file.as_str(), "--size=256k", "--rw=write", "--do_verify=0"];
        w.extend(c.write.iter().map(String::as_str));
        let out = run(writer_fiox, d.path(), &w);
        assert_eq!(out.code, 0, "writing {:?}: {}", c.write, out.stderr);
        let mut r = vec![file.as_str(), "--size=256k", "--rw=read"];
        r.extend(c.read.iter().map(String::as_str));
        let out = run(!writer_fiox, d.path(), &r);
        let read = if out.code == 0 { dir_bytes(&out, "read") } else { 0 };
        if out.code != 0 || read != 256 << 10 {
            failed
                .push(format!("{} {:?} -> {:?}: rc {} read {read}: {}", c.kind, c.write, c.read, out.code, out.stderr));
        }
        std::fs::remove_file(d.path().join(format!("c{n}.dat"))).ok();
    }
    assert!(failed.is_empty(), "{} of {} cases failed:\n{}", failed.len(), cases().len(), failed.join("\n"));
}

#[test]
fn fiox_verifies_what_fio_wrote() {
    cross(false);
}

#[test]
fn fio_verifies_what_fiox_wrote() {
    cross(true);
}

/// Flips bit 0 of byte `at`, zeroes `[zero, zero+4096)`, copies the block at `from` over
/// the one at `to`.
fn plant(path: &Path, flip: u64, zero: u64, from: u64, to: u64) {
    let mut img = std::fs::read(path).unwrap();
    img[flip as usize] ^= 1;
    img[zero as usize..zero as usize + 4096].fill(0);
    let block = img[from as usize..from as usize + 4096].to_vec();
    img[to as usize..to as usize + 4096].copy_from_slice(&block);
    std::fs::write(path, img).unwrap();
}

#[test]
fn planted_corruption_is_reported_as_fio_reports_it() {
    let d = scratch();
    let out = fio(
        d.path(),
        &["--name=w", "--filename=p.dat", "--size=1m", "--bs=4k", "--rw=write", "--verify=md5", "--do_verify=0"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    plant(&d.path().join("p.dat"), 20480 + 100, 49152, 81920, 122880);
    let read = ["--filename=p.dat", "--size=1m", "--bs=4k", "--rw=read", "--verify=md5"];
    // Default: the first failure ends the job; the failing block was read and is counted.
    let (a, b) = (run(false, d.path(), &read), run(true, d.path(), &read));
    assert_eq!((a.code, b.code), (1, 1), "fio: {}\nfiox: {}", a.stderr, b.stderr);
    assert_eq!(b.stderr, a.stderr, "the failure's lines are fio's");
    assert_eq!(dir_bytes(&b, "read"), dir_bytes(&a, "read"));
    assert_eq!(json(&b)["jobs"][0]["error"], 84);
    // continue_on_error=verify: every block is read, every failure reported and counted.
    let mut all = read.to_vec();
    all.push("--continue_on_error=verify");
    let (a, b) = (run(false, d.path(), &all), run(true, d.path(), &all));
    assert_eq!((a.code, b.code), (0, 0), "fio: {}\nfiox: {}", a.stderr, b.stderr);
    assert_eq!(b.stderr, a.stderr);
    for key in ["error", "total_err", "first_error"] {
        assert_eq!(json(&b)["jobs"][0][key], json(&a)["jobs"][0][key], "{key}");
    }
    assert_eq!(dir_bytes(&b, "read"), 1 << 20);
}

#[test]
fn read_back_reads_what_was_written_as_fio() {
    let d = scratch();
    for (engine, depth) in [("psync", "1"), ("libaio", "8"), ("io_uring", "16")] {
        let e = format!("--ioengine={engine}");
        let q = format!("--iodepth={depth}");
        let args =
            ["--filename=rb.dat", "--size=4m", "--bs=4k", "--rw=randrw", "--verify=crc32c", "--direct=1", &e, &q];
        let (a, b) = (run(false, d.path(), &args), run(true, d.path(), &args));
        assert_eq!((a.code, b.code), (0, 0), "{engine}: fio {} fiox {}", a.stderr, b.stderr);
        let ja = &json(&a)["jobs"][0];
        let jb = &json(&b)["jobs"][0];
        // The mixed phase splits the size between reads and writes by random draws; the
        // read-back reads every block written (each once, under the random map): reads add up
        // to the size in both tools, whatever the split.
        assert_eq!(jb["read"]["io_bytes"], ja["read"]["io_bytes"], "{engine}");
        assert_eq!(jb["read"]["io_bytes"], 4 << 20, "{engine}");
        let w = jb["write"]["io_bytes"].as_u64().unwrap();
        assert!(w > 1 << 20 && w < 3 << 20, "{engine}: {w}");
        assert_eq!(jb["error"], 0);
        std::fs::remove_file(d.path().join("rb.dat")).ok();
    }
}

#[test]
fn time_based_write_only_verify_warns_as_fio() {
    let d = scratch();
    let args =
        ["--filename=tb.dat", "--size=1m", "--bs=4k", "--rw=write", "--verify=crc32c", "--time_based", "--runtime=1"];
    let (a, b) = (run(false, d.path(), &args), run(true, d.path(), &args));
    let line = "fio: verification read phase will never start because write phase uses all of runtime";
    assert!(a.stdout.starts_with(line), "{}", a.stdout);
    // As fio: the warning comes before the JSON document, and standard error stays empty.
    assert!(b.stdout.starts_with(line), "{}", b.stdout);
    assert_eq!(b.stderr, "");
    let normal = fiox(
        d.path(),
        &["--name=v", "--filename=tb.dat", "--size=1m", "--rw=write", "--verify=crc32c", "--time_based", "--runtime=1"],
    );
    assert!(normal.stdout.starts_with(line), "{}", normal.stdout);
    assert_eq!(dir_bytes(&b, "read"), 0);
}

#[test]
fn bad_verify_options_are_refused_before_any_io() {
    let d = scratch();
    for (args, want) in [
        (&["--verify=md5", "--verify_interval=20"][..], "verify_interval"),
        (&["--verify=md5", "--verify_offset=10"][..], "verify_offset"),
        (&["--verify=sha512", "--bs=128"][..], "header"),
        (&["--verify=md5", "--bs=4k", "--verify_offset=4090"][..], "verify_offset"),
        (&["--verify=pattern"][..], "verify_pattern"),
        (&["--verify=md5", "--verify_pattern=0xzz"][..], "verify_pattern"),
        (&["--verify=crc99"][..], "crc99"),
    ] {
        let mut a = vec!["--name=x", "--filename=bad.dat", "--size=64k", "--rw=write"];
        a.extend_from_slice(args);
        let out = fiox(d.path(), &a);
        assert_ne!(out.code, 0, "{args:?}");
        assert!(out.stderr.contains(want), "{args:?}: {}", out.stderr);
        assert!(!d.path().join("bad.dat").exists(), "{args:?}: no I/O");
    }
}

/// The write job's I/O as `write_iolog` records it: direction and offset per line.
fn iolog_ops(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| {
            // Version 3 lines: time, file, action, offset, length.
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 5 && (f[2] == "read" || f[2] == "write")).then(|| format!("{} {}", f[2], f[3]))
        })
        .collect()
}

#[test]
fn verify_backlog_interleaves_reads_as_fio() {
    let d = scratch();
    for (backlog, batch) in [("8", "4"), ("8", "8"), ("4", "6")] {
        let mut logs = Vec::new();
        for fiox_run in [false, true] {
            let b = format!("--verify_backlog={backlog}");
            let bb = format!("--verify_backlog_batch={batch}");
            let args = [
                "--filename=bl.dat",
                "--size=256k",
                "--bs=4k",
                "--rw=write",
                "--verify=crc32c",
                &b,
                &bb,
                "--write_iolog=bl.log",
            ];
            // fio appends to an existing iolog.
            std::fs::remove_file(d.path().join("bl.log")).ok();
            let out = run(fiox_run, d.path(), &args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert_eq!(dir_bytes(&out, "write"), 256 << 10);
            logs.push((iolog_ops(&d.path().join("bl.log")), dir_bytes(&out, "read")));
            std::fs::remove_file(d.path().join("bl.dat")).ok();
        }
        assert_eq!(logs[1].1, logs[0].1, "backlog {backlog}/{batch}: bytes read");
        assert_eq!(logs[1].0, logs[0].0, "backlog {backlog}/{batch}: the same reads between the same writes");
        assert_eq!(logs[0].0.len(), 128, "64 writes and their 64 reads");
    }
}

#[test]
fn state_files_are_fios_both_ways() {
    let d = scratch();
    let job =
        ["--name=st", "--size=1m", "--bs=4k", "--rw=write", "--verify=crc32c", "--iodepth=4", "--ioengine=libaio"];
    let state = d.path().join("local-st-0-verify.state");
    let mut files = Vec::new();
    for fiox_run in [false, true] {
        let mut a = job.to_vec();
        a.extend(["--filename=s.dat", "--do_verify=0", "--output=/dev/null"]);
        let out = tool(fiox_run, d.path(), &a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        files.push(std::fs::read(&state).expect("a write job with verify saves its state, as fio"));
    }
    // The same bytes as fio's state file for the same sequential job, but for the offset
    // generator's state, unused by fio 3.33 when loading, where fiox marks its run.
    let (f, x) = (&files[0], &files[1]);
    assert_eq!(x.len(), f.len());
    assert_eq!(x[24 + 40..24 + 44], *b"FIOX");
    assert_eq!((&x[24..24 + 40], &x[24 + 88..]), (&f[24..24 + 40], &f[24 + 88..]));
    // Each tool verifies up to the point the other's state file records.
    for (saved_by_fiox, reader_fiox) in [(true, false), (false, true)] {
        std::fs::write(&state, &files[saved_by_fiox as usize]).unwrap();
        if !saved_by_fiox {
            // fio's file was saved by fio's run; fiox's blocks are on the file now, which the
            // mark would refuse: the blocks fio wrote go back first.
            let out = fio(
                d.path(),
                &[&job[..], &["--filename=s.dat", "--do_verify=0", "--verify_state_save=0", "--output=/dev/null"]]
                    .concat(),
            );
            assert_eq!(out.code, 0);
        }
        let mut a = job.to_vec();
        a.extend(["--filename=s.dat", "--verify_only", "--verify_state_load=1", "--output-format=json"]);
        let out = tool(reader_fiox, d.path(), &a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(dir_bytes(&out, "read"), 1 << 20);
        if reader_fiox {
            // fio 3.33 books the writes it only planned (write: 1 MiB); fiox wrote nothing.
            assert_eq!(dir_bytes(&out, "write"), 0, "verify_only writes nothing");
        }
    }
    // A state left by an earlier run, over blocks a later run wrote (a rerun killed before it
    // saved its own): fio 3.33 uses it silently; fiox names it.
    std::fs::write(&state, &files[1]).unwrap();
    let out = fiox(
        d.path(),
        &[&job[..], &["--filename=s.dat", "--do_verify=0", "--verify_state_save=0", "--output=/dev/null"]].concat(),
    );
    assert_eq!(out.code, 0);
    let out = fiox(d.path(), &[&job[..], &["--filename=s.dat", "--verify_only", "--verify_state_load=1"]].concat());
    assert_eq!(out.code, 1);
    assert!(out.stderr.starts_with("verify: stale verify state file: it was saved by run"), "{}", out.stderr);
    // A state file that is not one is refused before any I/O.
    std::fs::write(&state, b"garbage").unwrap();
    let mut a = job.to_vec();
    a.extend(["--filename=s.dat", "--verify_only", "--verify_state_load=1"]);
    let out = fiox(d.path(), &a);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("verify_state_load") && out.stderr.contains("too short"), "{}", out.stderr);
}

#[test]
fn shared_files_warn_and_pass_as_in_fio() {
    let d = scratch();
    let args = ["--filename=sh.dat", "--size=256k", "--bs=4k", "--rw=write", "--verify=md5", "--numjobs=2"];
    for fiox_run in [false, true] {
        let out = tool(fiox_run, d.path(), &[&["--name=w"][..], &args].concat());
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.starts_with("fio: multiple writers may overwrite blocks"), "{}", out.stdout);
    }
    let out = fiox(
        d.path(),
        &[
            "--name=w",
            "--filename=nr.dat",
            "--size=256k",
            "--bsrange=4k-16k",
            "--norandommap",
            "--rw=randwrite",
            "--verify=md5",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("fio: norandommap given for variable block sizes, verify limited"),
        "{}",
        out.stdout
    );
}

/// Copies `len` bytes at `at` from the image `from` into the file `to`: the device lost the
/// writes that made `to`'s contents there (or returned stale data).
fn restore(from: &Path, to: &Path, at: usize, len: usize) {
    let old = std::fs::read(from).unwrap();
    let mut new = std::fs::read(to).unwrap();
    new[at..at + len].copy_from_slice(&old[at..at + len]);
    std::fs::write(to, new).unwrap();
}

#[test]
fn the_journal_catches_lost_writes_fio_misses() {
    let d = scratch();
    let job = ["--name=j", "--filename=j.dat", "--size=1m", "--bs=4k", "--verify=crc32c", "--output-format=json"];
    fn with<'a>(job: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [job, extra].concat()
    }
    // An older generation of every block, then the new one, recorded in the journal.
    assert_eq!(fiox(d.path(), &with(&job, &["--rw=write", "--do_verify=0"])).code, 0);
    std::fs::copy(d.path().join("j.dat"), d.path().join("old.dat")).unwrap();
    let out = fiox(d.path(), &with(&job, &["--rw=randwrite", "--do_verify=0", "--verify_journal=J"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    restore(&d.path().join("old.dat"), &d.path().join("j.dat"), 40960, 8192);
    // fio 3.33 sees two valid blocks: the lost writes pass.
    let by_fio = fio(d.path(), &with(&job, &["--rw=read"]));
    assert_eq!(by_fio.code, 0, "{}", by_fio.stderr);
    // fiox, from the journal, whatever order the writes had: verify_only and a read job.
    for extra in [
        &["--rw=randwrite", "--verify_only", "--verify_journal=J", "--continue_on_error=verify"][..],
        &["--rw=read", "--verify_journal=J", "--continue_on_error=verify"],
    ] {
        let out = fiox(d.path(), &with(&job, extra));
        assert_eq!(json(&out)["jobs"][0]["total_err"], 2, "{extra:?}: {}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{}", out.stderr);
        for (line, at) in lines.iter().zip([40960, 45056]) {
            assert!(line.starts_with("verify: stale block (lost write?): found generation"), "{line}");
            assert!(line.contains(&format!("at file j.dat offset {at}, length 4096")), "{line}");
        }
        assert_eq!(dir_bytes(&out, "read"), 1 << 20, "{extra:?}");
    }
}

#[test]
fn after_sigkill_the_journal_checks_every_acknowledged_write() {
    let d = scratch();
    let job = [
        "--name=k",
        "--filename=k.dat",
        "--size=64m",
        "--bs=4k",
        "--verify=crc32c",
        "--ioengine=libaio",
        "--iodepth=16",
    ];
    let mut w: Vec<&str> = job.to_vec();
    w.extend(["--rw=randwrite", "--do_verify=0", "--verify_journal=K", "--rate_iops=4000", "--output=/dev/null"]);
    let mut child = std::process::Command::new(crate::util::fiox_bin()).args(&w).current_dir(d.path()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let journal = std::fs::read(d.path().join("K")).unwrap();
    let (_, recs) = fiox_verify_records(&journal);
    let done = recs.iter().filter(|&&k| k == 2).count() as u64;
    assert!(done > 100, "the writer ran for a while: {done} writes completed");
    let mut v: Vec<&str> = job.to_vec();
    v.extend(["--rw=randwrite", "--verify_only", "--verify_journal=K", "--output-format=json"]);
    let out = fiox(d.path(), &v);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Every completed write the journal recorded is read and checked (writes in flight at the
    // kill, with no record of completion, are checked when an older write preceded them).
    assert!(dir_bytes(&out, "read") >= done * 4096, "{} < {}", dir_bytes(&out, "read"), done * 4096);
    // A journal written for other files is refused before any I/O.
    let out = fiox(
        d.path(),
        &[
            "--name=k",
            "--filename=other.dat",
            "--size=64m",
            "--rw=randwrite",
            "--verify=crc32c",
            "--verify_only",
            "--verify_journal=K",
        ],
    );
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("verify_journal 'K': it records the files"), "{}", out.stderr);
}

/// The kinds of a journal's records (1 pending, 2 done, 3 failed), read from its bytes as
/// documented in fiox-verify's `journal.rs`.
fn fiox_verify_records(b: &[u8]) -> (usize, Vec<u8>) {
    let n = u32::from_le_bytes(b[24..28].try_into().unwrap()) as usize;
    let mut at = 28;
    for _ in 0..n {
        let len = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 12 + len;
    }
    (at, b[at..].chunks_exact(24).map(|r| r[0]).collect())
}

#[test]
fn trimmed_blocks_read_back_as_zeros() {
    // fio 3.33 cannot run these jobs here: its trims fail on a regular file ("Inappropriate
    // ioctl for device") and it aborts on an assertion on a loop device (verify.md, 1.1).
    let d = scratch();
    let job = [
        "--name=t",
        "--filename=t.dat",
        "--size=1m",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let out = fiox(d.path(), &[&job[..], &["--trim_percentage=50", "--trim_backlog=4"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = &json(&out)["jobs"][0];
    let trimmed = j["trim"]["io_bytes"].as_u64().unwrap();
    assert!(trimmed > 384 << 10 && trimmed < 640 << 10, "about half of 1 MiB trimmed: {trimmed}");
    assert_eq!(j["read"]["io_bytes"], 1 << 20, "trimmed blocks are read back too, as zeros");
    assert_eq!(j["write"]["io_bytes"], 1 << 20);
    // Without trim_verify_zero, trimmed blocks are not verified.
    let out =
        fiox(d.path(), &[&job[..], &["--trim_percentage=50", "--trim_backlog=4", "--trim_verify_zero=0"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = &json(&out)["jobs"][0];
    let trimmed = j["trim"]["io_bytes"].as_u64().unwrap();
    assert_eq!(j["read"]["io_bytes"].as_u64().unwrap(), (1 << 20) - trimmed);
}

#[test]
fn no_false_failures_under_concurrency() {
    // On tmpfs, so that 20 seeds of every shape stay quick; the device does not matter here,
    // the ordering of overlapping I/O in flight does.
    let d = tempfile::Builder::new().prefix("fiox-verify-").tempdir_in("/dev/shm").unwrap();
    let shapes: &[&[&str]] = &[
        &["--ioengine=libaio", "--iodepth=32", "--rw=randwrite", "--bs=4k"],
        &["--ioengine=io_uring", "--iodepth=32", "--rw=randwrite", "--norandommap", "--bssplit=4k/50:16k/30:64k/20"],
        &["--ioengine=psync", "--rw=randrw", "--norandommap", "--bsrange=4k-32k", "--verify_interval=4k"],
        &["--ioengine=libaio", "--iodepth=8", "--rw=write", "--numjobs=4", "--offset_increment=1m", "--size=1m"],
        &["--ioengine=io_uring", "--iodepth=16", "--rw=randwrite", "--norandommap", "--verify_backlog=16"],
        &["--ioengine=libaio", "--iodepth=16", "--rw=randwrite", "--verify_backlog=8", "--verify_backlog_batch=4"],
        &["--ioengine=psync", "--rw=randwrite", "--verify_async=2", "--bs=8k"],
    ];
    for shape in shapes {
        for seed in 1..=20 {
            let s = format!("--randseed={seed}");
            let mut a = vec!["--filename=c.dat", "--size=4m", "--verify=crc32c", "--group_reporting", &s];
            a.extend_from_slice(shape);
            let out = run(true, d.path(), &a);
            assert_eq!(out.code, 0, "{shape:?} seed {seed}: {}", out.stderr);
            assert_eq!(json(&out)["jobs"][0]["error"], 0, "{shape:?} seed {seed}");
            assert!(dir_bytes(&out, "read") > 0, "{shape:?} seed {seed}: read back");
        }
        std::fs::remove_file(d.path().join("c.dat")).ok();
    }
}

#[test]
fn verify_dump_writes_fios_files() {
    let d = scratch();
    let out = fio(
        d.path(),
        &["--name=w", "--filename=p.dat", "--size=64k", "--bs=4k", "--rw=write", "--verify=md5", "--do_verify=0"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    plant(&d.path().join("p.dat"), 20480 + 100, 49152, 0, 0);
    let read = [
        "--filename=p.dat",
        "--size=64k",
        "--bs=4k",
        "--rw=read",
        "--verify=md5",
        "--verify_dump=1",
        "--continue_on_error=verify",
    ];
    let mut seen = Vec::new();
    for fiox_run in [false, true] {
        let sub = d.path().join(if fiox_run { "x" } else { "f" });
        std::fs::create_dir(&sub).unwrap();
        std::fs::copy(d.path().join("p.dat"), sub.join("p.dat")).unwrap();
        let out = run(fiox_run, &sub, &read);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let mut files = crate::util::listing(&sub);
        files.retain(|f| f != "p.dat");
        // The received block is what was read.
        let received = std::fs::read(sub.join("p.dat.20480.received")).unwrap();
        assert_eq!(received, std::fs::read(sub.join("p.dat")).unwrap()[20480..24576]);
        seen.push(files);
    }
    assert_eq!(seen[1], seen[0], "the same dump files as fio");
}

#[test]
fn a_trigger_stops_the_jobs_saves_their_state_and_runs_its_command() {
    let d = scratch();
    let job =
        ["--name=tr", "--filename=t.dat", "--size=64m", "--bs=4k", "--rw=write", "--verify=crc32c", "--rate_iops=2000"];
    for fiox_run in [false, true] {
        for f in ["t.dat", "fired", "local-tr-0-verify.state"] {
            std::fs::remove_file(d.path().join(f)).ok();
        }
        let mut a = job.to_vec();
        a.extend(["--trigger-timeout=1", "--trigger=touch fired", "--output-format=json"]);
        let t0 = std::time::Instant::now();
        let out = tool(fiox_run, d.path(), &a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(t0.elapsed().as_secs() < 10, "the trigger ended the run (64 MiB at 2000 IOPS takes 8 s)");
        assert!(d.path().join("fired").exists(), "the trigger's command ran");
        let written = dir_bytes(&out, "write");
        assert!(written > 0 && written < 64 << 20, "{written}");
        assert_eq!(dir_bytes(&out, "read"), 0, "no read-back after a trigger");
        // The state the trigger saved verifies what was written, in each tool.
        let mut v = job.to_vec();
        v.extend(["--verify_only", "--verify_state_load=1", "--output-format=json"]);
        let out = tool(fiox_run, d.path(), &v);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let read = dir_bytes(&out, "read");
        assert!(read + (64 << 10) >= written && read <= written, "read {read} of {written}");
    }
}

#[test]
fn every_restored_older_block_is_reported_stale_at_its_offset() {
    // Stale data and lost writes, planted at random: whole blocks, and interval-aligned halves
    // of blocks (a torn write whose halves are each a valid older interval), which no checksum
    // can see; the journal's generations catch each one, at its offset, and nothing else.
    let d = scratch();
    let job = ["--name=s", "--filename=s.dat", "--size=4m", "--bs=8k", "--verify_interval=4k", "--verify=crc32c"];
    let go = |extra: &[&str]| fiox(d.path(), &[&job[..], extra].concat());
    assert_eq!(go(&["--rw=write", "--do_verify=0", "--output=/dev/null"]).code, 0);
    std::fs::copy(d.path().join("s.dat"), d.path().join("old.dat")).unwrap();
    assert_eq!(go(&["--rw=randwrite", "--do_verify=0", "--verify_journal=J", "--output=/dev/null"]).code, 0);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut planted = std::collections::BTreeSet::new();
    while planted.len() < 200 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let interval = (rng % 1024) as usize; // one of the 4 KiB intervals
        planted.insert(interval * 4096);
    }
    for &at in &planted {
        restore(&d.path().join("old.dat"), &d.path().join("s.dat"), at, 4096);
    }
    let out = go(&[
        "--rw=randwrite",
        "--verify_only",
        "--verify_journal=J",
        "--continue_on_error=verify",
        "--output-format=json",
    ]);
    // One failure per block read, reported at its first stale interval.
    let reported: std::collections::BTreeSet<usize> = out
        .stderr
        .lines()
        .map(|l| {
            assert!(l.starts_with("verify: stale block (lost write?)"), "{l}");
            let at = l.split(" offset ").nth(1).unwrap().split(',').next().unwrap();
            at.parse().unwrap()
        })
        .collect();
    let first_per_block: std::collections::BTreeSet<usize> =
        planted.iter().filter(|&&at| at % 8192 == 0 || !planted.contains(&(at - 4096))).copied().collect();
    assert_eq!(reported, first_per_block);
    assert_eq!(json(&out)["jobs"][0]["total_err"].as_u64().unwrap() as usize, first_per_block.len());
}

#[test]
fn each_loop_is_read_back_before_the_next_as_in_fio() {
    let d = scratch();
    for rw in ["--rw=write", "--rw=randwrite"] {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            std::fs::remove_file(d.path().join("lp.log")).ok();
            let args = [
                "--filename=lp.dat",
                "--size=256k",
                "--bs=4k",
                rw,
                "--verify=crc32c",
                "--loops=3",
                "--write_iolog=lp.log",
            ];
            let out = run(fiox_run, d.path(), &args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            // The direction of each I/O, runs collapsed: W R W R W R.
            let mut shape: Vec<char> = iolog_ops(&d.path().join("lp.log"))
                .iter()
                .map(|l| if l.starts_with("write") { 'W' } else { 'R' })
                .collect();
            shape.dedup();
            seen.push((dir_bytes(&out, "write"), dir_bytes(&out, "read"), shape.into_iter().collect::<String>()));
        }
        assert_eq!(seen[1], seen[0], "{rw}");
        assert_eq!(seen[0].2, "WRWRWR", "{rw}");
    }
}

/// A job that only reads but verifies keeps a buffer per unit: with one buffer shared by the
/// reads in flight (what fiox does for reads nobody looks at), 32 reads would overwrite each
/// other's data before it is checked, and the good blocks would fail.
#[test]
fn deep_read_only_verify_checks_each_read_in_its_own_buffer() {
    let d = scratch();
    let w = ["--filename=dv.dat", "--size=4m", "--bs=64k", "--rw=write", "--verify=crc32c", "--do_verify=0"];
    let out = run(true, d.path(), &w);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let read = |engine: &str| {
        let e = format!("--ioengine={engine}");
        let args = ["--filename=dv.dat", "--size=4m", "--bs=64k", "--rw=randread", "--verify=crc32c", "--direct=1"];
        run(true, d.path(), &[&args[..], &["--iodepth=32", &e]].concat())
    };
    for engine in ["libaio", "io_uring"] {
        let out = read(engine);
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{engine}");
        assert_eq!(dir_bytes(&out, "read"), 4 << 20, "{engine}");
    }
    // And a bad block is still caught at depth.
    plant(&d.path().join("dv.dat"), 3 * 65536 + 100, 10 * 65536, 20 * 65536, 40 * 65536);
    let out = read("libaio");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(json(&out)["jobs"][0]["error"], 84);
}
