//! fio 3.42's options (fiox follows fio 3.33 elsewhere): each compared with fio 3.42 itself
//! where it is built, and always with what fio 3.42 did, recorded below.
//!
//! fio 3.42 is found at `$FIOX_FIO342`, else `/var/tmp/fio-3.42/fio` (built from
//! `../shared/fio-src/fio-3.42.tar.gz` with `./configure && make`). CI machines have only
//! Debian's fio 3.33, so every test also checks fiox against the recorded expectations: the
//! constants below were recorded on 2026-11-27 by running that fio 3.42 build on the same jobs
//! (a 1 MiB scratch file, psync, ext4), the commands being the ones each test runs. Where fio
//! 3.42 is present, the test runs it too and checks that the recording still holds, so a stale
//! expectation fails rather than passes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{fiox, json, scratch, skip, Out};

/// The fio 3.42 binary, when it is built here.
pub(super) fn fio342() -> Option<PathBuf> {
    let p = std::env::var_os("FIOX_FIO342").map_or_else(|| PathBuf::from("/var/tmp/fio-3.42/fio"), PathBuf::from);
    p.exists().then_some(p)
}

/// fio 3.42 on `args` in `dir`, `None` where it is not built.
pub(super) fn fio342_run(dir: &Path, args: &[&str]) -> Option<Out> {
    let bin = fio342()?;
    let out = Command::new("timeout").args(["-k", "5", "120"]).arg(bin).args(args).current_dir(dir).output();
    Some(Out::from(out.expect("cannot start fio 3.42")))
}

/// A job on a 1 MiB file of the scratch directory, with `extra` options.
fn job<'a>(file: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--name=j", file, "--size=1m", "--bs=4k", "--ioengine=psync"];
    a.extend_from_slice(extra);
    a
}

/// Refusals, with the words fio 3.42 printed (recorded) and the words fiox prints.
const REFUSED: &[(&[&str], &str, &str)] = &[
    // No FDP on a regular file: fio 3.42 refuses when it sets the file up.
    (&["--rw=write", "--dataplacement=fdp"], "engine (psync) lacks fetch ruhs", "engine (psync) lacks fetch ruhs"),
    (&["--rw=write", "--fdp=1"], "ruh info failed for", "ruh info failed for"),
    (
        &["--rw=write", "--dataplacement=streams"],
        "stream IDs must be provided for dataplacement=streams",
        "stream IDs must be provided",
    ),
    (&["--rw=write", "--plids=0-200"], "only 128 IDs supported", "only 128 IDs supported"),
    (&["--rw=write", "--plid_select=bogus"], "failed parsing plid_select=bogus", "plid_select"),
    (&["--rw=write", "--dataplacement=bogus"], "failed parsing dataplacement=bogus", "dataplacement"),
    (&["--rw=write", "--dp_scheme=no-such-file"], "failed parsing dp_scheme=no-such-file", "dp_scheme=no-such-file"),
    (
        &["--rw=write", "--log_issue_time=1", "--write_lat_log=x"],
        "log_issue_time option requires write_lat_log and log_offset options",
        "log_issue_time option requires write_lat_log and log_offset options",
    ),
    (
        &["--rw=write", "--ramp_time=1", "--ramp_size=4k"],
        "cannot specify both ramp_time and ramp_size",
        "cannot specify both ramp_time and ramp_size",
    ),
    (
        &["--rw=read", "--ss_dur=10", "--ss_interval=3"],
        "must be multiple of ss_check_interval",
        "must be multiple of ss_check_interval",
    ),
    (
        &["--rw=read", "--ss_dur=2", "--ss_interval=500ms"],
        "ss_check_interval must be at least 1s",
        "ss_check_interval must be at least 1s",
    ),
    (&["--rw=write", "--filetype=bogus"], "failed parsing filetype=bogus", "filetype"),
    (&["--rw=write", "--priohint=1024"], "1023 max", "from 0 to 1023"),
    (&["--rw=write", "--num_range=257"], "256 max", "from 0 to 256"),
];

#[test]
fn refusals_follow_fio_3_42() {
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    for (extra, fio_says, fiox_says) in REFUSED {
        let args = job(&file, extra);
        let o = fiox(dir.path(), &args);
        assert_ne!(o.code, 0, "fiox {extra:?} should be refused: {}", o.stdout);
        assert!(o.stderr.contains(fiox_says), "fiox {extra:?}: expected {fiox_says:?}, got: {}", o.stderr);
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
        if let Some(f) = fio342_run(dir.path(), &args) {
            assert_ne!(f.code, 0, "fio 3.42 {extra:?} ran: the recording is stale");
            // fio prints a job's own error (td_verror) on stdout, its parse errors on stderr.
            let said = format!("{}{}", f.stderr, f.stdout);
            assert!(said.contains(fio_says), "fio 3.42 {extra:?} no longer says {fio_says:?}: {said}");
        }
    }
}

/// Options fio 3.42 accepts on a regular file with psync, where they change nothing that is
/// counted: the job writes its 1 MiB in 256 I/Os under both (recorded: fio 3.42 ran each).
const ACCEPTED: &[&[&str]] = &[
    &["--filetype=file"],
    &["--filetype=block"],
    &["--filetype=char"],
    &["--num_range=2"],
    &["--priohint=7"],
    &["--priohint=2", "--prioclass=2"],
    &["--job_start_clock_id=1"],
    &["--spr_num_regions=10", "--spr_op=0.2", "--spr_cs=0"],
    &["--write_zone_remainder=1"],
    &["--recover_zbd_write_error=1"],
    &["--verify=crc32c", "--verify_write_sequence=0", "--verify_header_seed=0"],
    &["--dataplacement=streams", "--plids=1,2,3"],
    &["--fdp_pli=1", "--fdp_pli_select=random"],
    &["--thinkcycles=1000"],
    &["--end_syncfs=1"],
    &["--ss_interval=2"],
    &["--log_window_value=both", "--write_lat_log=w", "--log_avg_msec=10"],
];

#[test]
fn accepted_as_fio_3_42_accepts_them() {
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    for extra in ACCEPTED {
        let mut args = job(&file, &["--rw=randwrite", "--output-format=json"]);
        args.extend_from_slice(extra);
        let mut outs = vec![("fiox", fiox(dir.path(), &args))];
        outs.extend(fio342_run(dir.path(), &args).map(|o| ("fio 3.42", o)));
        for (who, o) in outs {
            assert_eq!(o.code, 0, "{who} {extra:?}: {}", o.stderr);
            let j = json(&o);
            assert_eq!(j["jobs"][0]["write"]["io_bytes"], 1 << 20, "{who} {extra:?}");
            assert_eq!(j["jobs"][0]["write"]["total_ios"], 256, "{who} {extra:?}");
        }
    }
}

/// FNV-1a of a file's bytes.
fn fnv(path: &Path) -> u64 {
    std::fs::read(path)
        .unwrap()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

#[test]
fn verify_pattern_interval_writes_fio_3_42_bytes() {
    // Recorded: fio 3.42 wrote a 64 KiB file whose FNV-1a is this, and verified it.
    const FIO342_FNV: u64 = 0xfd2a_fd21_ce04_c565;
    let dir = scratch();
    let args = |name: &str| {
        vec![
            "--name=j".to_string(),
            format!("--filename={}", dir.path().join(name).display()),
            "--size=64k".into(),
            "--bs=16k".into(),
            "--rw=write".into(),
            "--verify=pattern".into(),
            "--verify_pattern=\"ab\"%o".into(),
            "--verify_pattern_interval=3000".into(),
        ]
    };
    let a = args("x");
    let o = fiox(dir.path(), &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(fnv(&dir.path().join("x")), FIO342_FNV);
    let b = args("y");
    if let Some(f) = fio342_run(dir.path(), &b.iter().map(String::as_str).collect::<Vec<_>>()) {
        assert_eq!(f.code, 0, "{}", f.stderr);
        assert_eq!(std::fs::read(dir.path().join("y")).unwrap(), std::fs::read(dir.path().join("x")).unwrap());
    }
    // What fiox wrote, fiox reads back as correct; a file written without the interval is not.
    let check = |extra: &[&str]| {
        let mut v: Vec<String> = a.clone();
        v[4] = "--rw=read".into();
        v.extend(extra.iter().map(|s| s.to_string()));
        fiox(dir.path(), &v.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert_eq!(check(&[]).code, 0);
    let o = check(&["--verify_pattern_interval=0"]);
    assert_ne!(o.code, 0, "a read without the interval should find other bytes");
}

/// One latency log line's columns.
fn columns(line: &str) -> Vec<String> {
    line.split(", ").map(str::to_string).collect()
}

#[test]
fn log_issue_time_and_priohint_in_the_log_columns() {
    // Recorded from fio 3.42 (the same job): `0, 32979, 1, 4096, 0, 0x400b, 73881`: time,
    // clat, write, bs, offset, prio (class 2, hint 1, level 3), issue time in ns; and
    // `0, 23335, 1, 4096, 0x4010` for priohint=2 alone (best effort, hint 2).
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    let lines = |prefix: &str, extra: &[&str], fio: bool| -> Option<Vec<Vec<String>>> {
        let mut args = job(&file, &["--size=64k", "--rw=write", "--output-format=terse", "--log_prio=1"]);
        let lat = format!("--write_lat_log={prefix}");
        args.push(&lat);
        args.extend_from_slice(extra);
        let o = if fio { fio342_run(dir.path(), &args)? } else { fiox(dir.path(), &args) };
        assert_eq!(o.code, 0, "{}", o.stderr);
        let text = std::fs::read_to_string(dir.path().join(format!("{prefix}_clat.1.log"))).unwrap();
        Some(text.lines().map(columns).collect())
    };
    let full = ["--prioclass=2", "--prio=3", "--priohint=1", "--log_offset=1", "--log_issue_time=1"];
    let mine = lines("x", &full, false).unwrap();
    assert_eq!(mine.len(), 16);
    let mut last_issue = 0;
    for (k, c) in mine.iter().enumerate() {
        assert_eq!(c.len(), 7, "{c:?}");
        assert_eq!((c[2].as_str(), c[3].as_str(), c[5].as_str()), ("1", "4096", "0x400b"));
        assert_eq!(c[4], (k * 4096).to_string());
        let issue: u64 = c[6].parse().unwrap();
        assert!(issue >= last_issue, "issue times go forward: {mine:?}");
        last_issue = issue;
    }
    let hint_only = lines("y", &["--priohint=2"], false).unwrap();
    assert!(hint_only.iter().all(|c| c.len() == 5 && c[4] == "0x4010"), "{hint_only:?}");
    if let Some(theirs) = lines("fx", &full, true) {
        let shape = |v: &[Vec<String>]| {
            v.iter().map(|c| (c.len(), c[2].clone(), c[4].clone(), c[5].clone())).collect::<Vec<_>>()
        };
        assert_eq!(shape(&theirs), shape(&mine));
        let theirs = lines("fy", &["--priohint=2"], true).unwrap();
        assert_eq!(theirs.iter().map(|c| c[4].clone()).collect::<Vec<_>>(), vec!["0x4010"; 16]);
    }
}

/// syncfs calls a job makes, counted by strace.
fn syncfs_calls(dir: &Path, bin: &Path, args: &[&str]) -> usize {
    let trace = dir.join("strace.out");
    let o = Command::new("strace")
        .args(["-f", "-e", "trace=syncfs", "-o"])
        .arg(&trace)
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&trace).unwrap().lines().filter(|l| l.contains("syncfs(") && l.contains("= 0")).count()
}

#[test]
fn end_syncfs_syncs_once_per_loop_of_writes() {
    if Command::new("strace").arg("-V").output().is_err() {
        skip!("strace is not installed (scripts/test.sh installs it)");
    }
    // Recorded with fio 3.42 under strace: 1 syncfs for a write job, 3 with loops=3, none for a
    // read job, 1 for three files.
    let cases: &[(&[&str], usize)] =
        &[(&["--rw=write"], 1), (&["--rw=write", "--loops=3"], 3), (&["--rw=read"], 0), (&["--rw=randrw"], 1)];
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    for (extra, want) in cases {
        let mut args = job(&file, &["--end_syncfs=1", "--output-format=terse"]);
        args.extend_from_slice(extra);
        assert_eq!(syncfs_calls(dir.path(), &crate::util::fiox_bin(), &args), *want, "fiox {extra:?}");
        if let Some(bin) = fio342() {
            assert_eq!(syncfs_calls(dir.path(), &bin, &args), *want, "fio 3.42 {extra:?}");
        }
    }
}

/// The uptime in ms (CLOCK_MONOTONIC's reading, near enough).
fn uptime_ms() -> u64 {
    let text = std::fs::read_to_string("/proc/uptime").unwrap();
    (text.split_whitespace().next().unwrap().parse::<f64>().unwrap() * 1000.0) as u64
}

#[test]
fn job_start_is_read_on_the_chosen_clock() {
    // Recorded: fio 3.42's job objects begin jobname, groupid, job_start, error; with
    // job_start_clock_id=1 (CLOCK_MONOTONIC) job_start is about the uptime in ms. fio 3.33 has
    // no job_start, so fiox prints it only when the job sets job_start_clock_id.
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    let run = |extra: &[&str], fio: bool| -> Option<serde_json::Value> {
        let mut args = job(&file, &["--rw=write", "--output-format=json"]);
        args.extend_from_slice(extra);
        let o = if fio { fio342_run(dir.path(), &args)? } else { fiox(dir.path(), &args) };
        assert_eq!(o.code, 0, "{}", o.stderr);
        Some(json(&o)["jobs"][0].clone())
    };
    let keys = |j: &serde_json::Value| j.as_object().unwrap().keys().take(4).cloned().collect::<Vec<_>>();
    let before = uptime_ms();
    let j = run(&["--job_start_clock_id=1"], false).unwrap();
    let after = uptime_ms();
    assert_eq!(keys(&j), ["jobname", "groupid", "job_start", "error"]);
    let start = j["job_start"].as_u64().unwrap();
    assert!(before.saturating_sub(1000) <= start && start <= after + 1000, "{before} <= {start} <= {after}");
    // CLOCK_REALTIME: ms since the epoch, as fio 3.42's default.
    let real = run(&["--job_start_clock_id=0"], false).unwrap()["job_start"].as_u64().unwrap();
    assert!(real > 1_700_000_000_000, "{real}");
    assert!(run(&[], false).unwrap().get("job_start").is_none(), "fio 3.33's layout without the option");
    if let Some(theirs) = run(&["--job_start_clock_id=1"], true) {
        assert_eq!(keys(&theirs), keys(&j));
        let t = theirs["job_start"].as_u64().unwrap();
        assert!(t.abs_diff(start) < 60_000, "fio 3.42 {t}, fiox {start}");
    }
}

#[test]
fn ss_interval_sets_the_samples_in_the_window() {
    // Recorded: fio 3.42 with ss_dur=4 ss_interval=2 reports two samples (iops [445, 499]).
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    let extra = [
        "--rw=read",
        "--time_based",
        "--runtime=5",
        "--ss=iops:0.0001%",
        "--ss_dur=4",
        "--ss_interval=2",
        "--rate_iops=500",
        "--output-format=json",
    ];
    let args = job(&file, &extra);
    let mut outs = vec![("fiox", fiox(dir.path(), &args))];
    outs.extend(fio342_run(dir.path(), &args).map(|o| ("fio 3.42", o)));
    for (who, o) in outs {
        assert_eq!(o.code, 0, "{who}: {}", o.stderr);
        let ss = &json(&o)["jobs"][0]["steadystate"];
        assert_eq!(ss["duration"], 4, "{who}: {ss}");
        assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2, "{who}: {ss}");
        // At 500 IOPS, a sample is a rate per second, not per interval.
        let first = ss["data"]["iops"][1].as_u64().unwrap();
        assert!((300..=700).contains(&first), "{who}: {ss}");
    }
}

#[test]
fn ramp_size_counts_the_runtime_after_its_bytes() {
    // Recorded: fio 3.42, time based for 1 s at 100 MiB/s after a 16 MiB ramp, reported a write
    // runtime of 1001 ms and 100 MiB (1600 I/Os of 64 KiB): the ramp's bytes are not counted
    // and the runtime starts after them.
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("g").display());
    let args = [
        "--name=j",
        &file,
        "--size=64m",
        "--bs=64k",
        "--rw=write",
        "--ramp_size=16m",
        "--time_based",
        "--runtime=1",
        "--rate=100m",
        "--output-format=json",
    ];
    let mut outs = vec![("fiox", fiox(dir.path(), &args))];
    outs.extend(fio342_run(dir.path(), &args).map(|o| ("fio 3.42", o)));
    for (who, o) in outs {
        assert_eq!(o.code, 0, "{who}: {}", o.stderr);
        let w = &json(&o)["jobs"][0]["write"];
        let runtime = w["runtime"].as_u64().unwrap();
        assert!((950..=1300).contains(&runtime), "{who}: runtime {runtime}");
        // 100 MiB/s for the measured second; a rate catches up, so allow a little either way.
        let bytes = w["io_bytes"].as_u64().unwrap();
        assert!((80 << 20..=120 << 20).contains(&bytes), "{who}: {bytes} bytes");
    }
}

/// fio 3.42 checks `log_issue_time`'s companions when it sets the job up, not when it parses:
/// `--parse-only` passes it alone, and the run is refused before any I/O.
#[test]
fn log_issue_time_alone_passes_parse_only_as_in_fio_3_42() {
    let dir = scratch();
    let args = ["--parse-only", "--name=e", "--ioengine=null", "--rw=randwrite", "--size=1M", "--log_issue_time=1"];
    let o = fiox(dir.path(), &args);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{}", o.stdout);
    if let Some(f) = fio342_run(dir.path(), &args) {
        assert_eq!(f.code, 0, "fio 3.42 refused it at parse time: the rule moved ({})", f.stderr);
    }
    let run = fiox(dir.path(), &args[1..]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("log_issue_time option requires write_lat_log and log_offset options"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
}
